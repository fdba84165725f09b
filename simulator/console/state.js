// What every view shares: the simulator's description (/_sim/info), its clock, and amounts in
// token units (the tokens' decimals and symbols from /_sim/info).

import { h } from "./dom.js";

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

function token(chainId, address) {
  return address ? shared.tokens.get(`${chainId}:${String(address).toLowerCase()}`) : undefined;
}

// An integer scaled by 10^decimals (atomic units, a RAY rate) as a decimal, cut (not rounded)
// to `places` decimals, trailing zeros dropped.
export function fixed(raw, decimals, places = 6) {
  const digits = String(raw).replace(/^-/, "").padStart(decimals + 1, "0");
  const whole = digits.slice(0, digits.length - decimals);
  const fraction = digits.slice(digits.length - decimals).slice(0, places).replace(/0+$/, "");
  return `${String(raw).startsWith("-") ? "-" : ""}${whole}${fraction ? `.${fraction}` : ""}`;
}

export function amount(chainId, address, raw) {
  if (raw === null || raw === undefined) return null;
  const known = token(chainId, address);
  if (!known) return String(raw);
  return `${fixed(raw, known.decimals)} ${known.symbol}`;
}

// An amount in token units, its atomic value on hover.
export function amountNode(chainId, address, raw) {
  if (raw === null || raw === undefined) return "—";
  return h("span", { class: "amount", title: `${raw} (atomic units)` }, amount(chainId, address, raw));
}

// A RAY-scaled rate (buy per sell in whole tokens) with eight significant digits.
export function rate(rayText) {
  const whole = fixed(rayText, 27, 0);
  const fraction = fixed(rayText, 27, 27).split(".")[1] || "";
  const zeros = whole === "0" ? fraction.length - fraction.replace(/^0+/, "").length : 0;
  return fixed(rayText, 27, Math.max(2, whole === "0" ? zeros + 8 : 8 - whole.length));
}

// A rate as the page shows it, its RAY value on hover; `withPair` adds the pair (USDT/USDC).
export function rateNode(chainId, sell, buy, rayText, withPair = true) {
  if (rayText === null || rayText === undefined) return "—";
  return h("span", { class: "rate", title: `${rayText} (RAY: buy per sell × 10^27)` },
    withPair ? `${rate(rayText)} ${symbol(chainId, buy)}/${symbol(chainId, sell)}` : rate(rayText));
}

// A token's symbol, its address on hover.
export function tokenNode(chainId, address) {
  return h("span", { title: address }, symbol(chainId, address));
}

export function symbol(chainId, address) {
  const known = token(chainId, address);
  return known ? known.symbol : address;
}
