// The venue: the clock with Advance, fault switches, reset, snapshots, each chain's head and the
// demo and maker wallets' balances, the v1 book, the rates-feed tape, the ramp's customers and
// transfers with the sandbox's actions (pay in, stall, fail).

import { get, send } from "./api.js";
import { field, h, orElse, replace, short, time } from "./dom.js";
import { on } from "./live.js";
import { amount, setClock, shared, simNow } from "./state.js";

function section(title, ...children) {
  return h("section", { class: "panel", "aria-label": title }, h("h3", {}, title), ...children);
}

export class VenueView {
  constructor() {
    this.message = h("p", { class: "note", role: "status" });
    this.clock = h("p", { class: "clock-now" });
    this.faults = h("div");
    this.snapshots = h("ul");
    this.chains = h("div");
    this.book = h("div");
    this.tape = h("div");
    this.ramp = h("div");
    const seconds = h("input", { type: "number", min: 1, value: 60, size: 8 });
    const snapshot = h("input", { type: "text", size: 16, value: "snap-1", pattern: "[A-Za-z0-9._\\-]{1,64}" });
    this.root = h("section", { class: "view", "aria-label": "Venue" }, h("h2", {}, "Venue"), this.message,
      section("Clock", this.clock, field("seconds", seconds),
        h("button", { type: "button", onclick: () => this.act(() => send("POST", "/_sim/clock/advance", { seconds: Number(seconds.value) }), "clock advanced") }, "Advance clock")),
      section("Faults", this.faults),
      section("State",
        h("button", { type: "button", onclick: () => this.act(() => send("POST", "/_sim/reset", {}), "reset done") }, "Reset"), " ",
        field("snapshot name", snapshot),
        h("button", { type: "button", onclick: () => this.act(() => send("POST", "/_sim/snapshots", { name: snapshot.value }), "snapshot taken").then(() => this.loadSnapshots()) }, "Take snapshot"),
        this.snapshots),
      section("Chains", h("button", { type: "button", onclick: () => this.loadChains() }, "Refresh balances"), this.chains),
      section("v1 book", this.book),
      section("Rates feed", this.tape),
      section("Ramp", this.ramp));
    on("clock", (clock) => this.showClock(clock));
    on("state", () => this.load());
    setInterval(() => this.tickClock(), 1000); // the service clock runs between its changes
    on("transfers", () => this.loadRamp());
  }

  async act(call, done) {
    try {
      await call();
      this.message.textContent = done;
    } catch (error) {
      this.message.textContent = error.message;
    }
  }

  showClock(clock) {
    setClock(clock);
    this.tickClock();
  }

  tickClock() {
    // The stream says when the clock is moved; between moves it runs with real time.
    const now = new Date(simNow()).toISOString().slice(0, 19);
    replace(this.clock, `now ${time(now)} (ahead of real time by ${Math.round(shared.offsetMs / 1000)} s)`);
  }

  async load() {
    this.showClock(await get("/_sim/clock"));
    await Promise.all([this.loadFaults(), this.loadSnapshots(), this.loadChains(), this.loadBook(), this.loadTape(), this.loadRamp()]);
  }

  async loadFaults() {
    const faults = await get("/_sim/faults");
    const chains = shared.info.chains.map((c) => c.chain_id);
    const toggle = (label, checked, change) => field(label, h("input", { type: "checkbox", checked, onchange: (e) => this.act(() => send("POST", "/_sim/faults", change(e.target.checked)), `${label}: ${e.target.checked}`).then(() => this.loadFaults()) }));
    const without = (list, id) => list.filter((x) => x !== id);
    replace(this.faults,
      toggle("venue paused", faults.venue_paused, (on) => ({ venue_paused: on })),
      chains.map((id) => toggle(`chain ${id} unreachable`, faults.chain_unreachable.includes(id), (on) => ({ chain_unreachable: on ? [...faults.chain_unreachable, id] : without(faults.chain_unreachable, id) }))),
      chains.map((id) => toggle(`chain ${id} indexer paused`, faults.indexer_paused.includes(id), (on) => ({ indexer_paused: on ? [...faults.indexer_paused, id] : without(faults.indexer_paused, id) }))),
      h("span", {}, ` internal errors pending: ${faults.internal_errors} `),
      h("button", { type: "button", onclick: () => this.act(() => send("DELETE", "/_sim/faults"), "faults cleared").then(() => this.loadFaults()) }, "Clear faults"));
  }

  async loadSnapshots() {
    const list = await get("/_sim/snapshots");
    replace(this.snapshots, list.snapshots.map((s) => h("li", {}, `${s.name} (${time(s.created_at)}) `,
      h("button", { type: "button", onclick: () => this.act(() => send("POST", `/_sim/snapshots/${encodeURIComponent(s.name)}/restore`), `restored ${s.name}`) }, `Restore ${s.name}`))));
    this.snapshots.hidden = list.snapshots.length === 0;
  }

  async loadChains() {
    const view = await get("/_sim/chains");
    replace(this.chains, view.chains.map((c) => {
      const info = shared.info.chains.find((x) => x.chain_id === c.chain_id);
      const symbols = info ? info.tokens.map((t) => t.symbol) : [];
      return h("div", { class: "chain" }, h("h4", {}, `chain ${c.chain_id}: block ${c.block ?? "unreadable"}`, c.error ? ` (${c.error})` : ""),
        h("table", { class: "list", "aria-label": `balances on chain ${c.chain_id}` },
          h("thead", {}, h("tr", {}, ["wallet", "name", "native", ...symbols].map((x) => h("th", {}, x)))),
          h("tbody", {}, c.wallets.map((w) => h("tr", {}, h("td", {}, `${w.label} ${short(w.address, 10)}`), h("td", {}, w.name ?? ""),
            h("td", {}, (Number(BigInt(w.native_wei) / 10n ** 14n) / 1e4).toString()),
            symbols.map((s) => h("td", {}, info ? amount(c.chain_id, info.tokens.find((t) => t.symbol === s).address, w.tokens[s] ?? "0") : w.tokens[s])))))));
    }));
  }

  async loadBook() {
    const [book, orders] = await Promise.all([get("/_sim/book"), get("/_sim/limit-orders", { status: "ACTIVE", limit: 500 })]);
    const byPair = new Map();
    for (const o of orders.items) {
      const s = o.summary;
      const key = `chain ${s.chain_id}: ${amount(s.chain_id, s.sell_token, "0").split(" ")[1] ?? s.sell_token} → ${amount(s.chain_id, s.buy_token, "0").split(" ")[1] ?? s.buy_token}`;
      if (!byPair.has(key)) byPair.set(key, []);
      byPair.get(key).push(o);
    }
    replace(this.book, h("p", {}, `${book.resting} resting of ${book.orders} placed; ${book.holds} held by swaps; sweep ran ${book.sweep.runs} times`),
      [...byPair.entries()].map(([pair, list]) => h("div", {}, h("h4", {}, pair),
        h("ul", {}, list.map((o) => h("li", {}, h("a", { href: `#/limit-orders/${o.id}` }, o.id), ` ${o.makers.map((m) => m.name || short(m.wallet)).join("")}: sells ${amount(o.summary.chain_id, o.summary.sell_token, o.summary.sell_amount)} for ${amount(o.summary.chain_id, o.summary.buy_token, o.summary.buy_amount)}`))))));
  }

  async loadTape() {
    try {
      const tickers = await get("/tickers");
      const trades = await Promise.all(tickers.map((t) => get("/historical_trades", { ticker_id: t.ticker_id, limit: 10 }).then((x) => [t, x])));
      replace(this.tape, orElse(trades.map(([t, x]) => {
        const rows = [...(x.buy || []), ...(x.sell || [])].sort((a, b) => b.trade_timestamp - a.trade_timestamp).slice(0, 10);
        return h("div", {}, h("h4", {}, `${t.ticker_id}: last ${t.last_price}, bid ${t.bid}, ask ${t.ask}`),
          rows.length ? h("ul", {}, rows.map((r) => h("li", {}, `${new Date(r.trade_timestamp * 1000).toISOString()} ${r.type} ${r.base_volume} @ ${r.price}`))) : h("p", {}, "no trades yet"));
      }), "The rates feed publishes no market."));
    } catch (error) {
      replace(this.tape, h("p", {}, `feed: ${error.message}`));
    }
  }

  async loadRamp() {
    let state = null;
    try {
      state = await get("/_sim/ramp/state");
    } catch (error) {
      replace(this.ramp, h("p", {}, `ramp provider: ${error.message}`));
      return;
    }
    const transfers = await get("/_sim/transfers", { limit: 100 });
    const action = (id, name, path, body) => h("button", { type: "button", onclick: () => this.act(() => send("POST", `/_sim/ramp/transfers/${encodeURIComponent(id)}/${path}`, body), `${name} ${id}`) }, `${name} ${id}`);
    replace(this.ramp,
      h("h4", {}, "Customers"),
      orElse(state.customers.map((c) => h("li", {}, `${c.id ?? ""} ${c.email ?? ""} · KYC ${c.review && c.review.state ? c.review.state : "—"}`)),
        "No ramp customer yet.", (items) => h("ul", {}, items)),
      h("h4", {}, "Transfers"),
      orElse(transfers.items.map((t) => h("li", {}, h("a", { href: `#/transfers/${t.id}` }, t.id),
        ` ${t.summary.side} ${t.summary.source_amount} · ${t.status} (${t.summary.provider_status}) `,
        action(t.id, "Pay in", "pay-in", {}), " ", action(t.id, "Stall", "stall"), " ", action(t.id, "Fail", "fail", { refund: false }))),
        "No ramp transfer yet.", (items) => h("ul", {}, items)));
  }
}
