// What every view shares: the simulator's description (/_sim/info) and its clock.

export const shared = { info: null, offsetMs: 0, tokens: new Map() };

export function setInfo(info) {
  shared.info = info;
  for (const chain of info.chains) {
    for (const token of chain.tokens) {
      shared.tokens.set(`${chain.chain_id}:${token.address.toLowerCase()}`, token);
    }
  }
}

export function setClock(clock) {
  shared.offsetMs = clock.offset_seconds * 1000;
}

export function simNow() {
  return Date.now() + shared.offsetMs;
}

export function amount(chainId, address, raw) {
  if (raw === null || raw === undefined) return null;
  const token = address ? shared.tokens.get(`${chainId}:${address.toLowerCase()}`) : null;
  if (!token) return String(raw);
  const digits = String(raw).padStart(token.decimals + 1, "0");
  const whole = digits.slice(0, digits.length - token.decimals);
  const fraction = digits.slice(digits.length - token.decimals).replace(/0+$/, "").slice(0, 6);
  return `${whole}${fraction ? `.${fraction}` : ""} ${token.symbol}`;
}

export function symbol(chainId, address) {
  const token = address ? shared.tokens.get(`${chainId}:${address.toLowerCase()}`) : null;
  return token ? token.symbol : address;
}
