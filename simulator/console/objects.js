// RFQs, v1 swaps, limit orders and ramp transfers: a live list (GET /_sim/<kind>, then the
// stream's items) and one object's timeline (GET /_sim/<kind>/<id>). An RFQ's timeline is drawn
// as a waterfall of its makers' answers against the reply-budget line.

import { get } from "./api.js";
import { Split, field, h, ms, replace, short, svg, time } from "./dom.js";
import { on } from "./live.js";
import { amountNode, rate, rateNode, simNow, symbol, tokenNode } from "./state.js";

const KEPT_ON_PAGE = 500;
const TITLES = { rfqs: "RFQs", swaps: "v1 swaps", "limit-orders": "v1 limit orders", transfers: "Ramp transfers" };

// Which token each amount of a summary or a step is in (docs/admin-api.md "Timelines"): `sell`
// is the summary's sell_token, `buy` its buy_token. A limit order's summary is the maker's side,
// so a fill's maker_gave is in its sell token; an RFQ's and a swap's, the taker's.
const TAKER_SIDE = {
  sell_amount: "sell", sold_amount: "sell", buy_amount: "buy", fee_amount: "sell",
  sold: "sell", proceeds: "buy", maker_gave: "buy", maker_received: "sell", fee: "sell",
};
const AMOUNTS = {
  rfqs: TAKER_SIDE,
  swaps: TAKER_SIDE,
  "limit-orders": { sell_amount: "sell", buy_amount: "buy", maker_gave: "sell", maker_received: "buy", fee: "buy" },
  transfers: {},
};

function makerName(ref) {
  return ref.name || short(ref.wallet, 10);
}

// A value of a summary or a step as the page shows it: amounts in token units (atomic on
// hover), tokens by symbol, simulator times without the zone letter, makers by name.
function shown(kind, summary, key, value) {
  if (value === null || value === undefined) return "—";
  const side = AMOUNTS[kind][key];
  if (side) return amountNode(summary.chain_id, summary[`${side}_token`], value);
  if (key === "sell_token" || key === "buy_token") return tokenNode(summary.chain_id, value);
  if (key === "rate_ray") return rateNode(summary.chain_id, summary.sell_token, summary.buy_token, value);
  if (key === "at" || key.endsWith("_at")) return time(value);
  if (key === "winners") return value.map(makerName).join(" + ") || "—";
  if (key === "losers") {
    return value.map((l) => `${makerName(l)} (${l.why}${l.vs_winner_bps !== null && l.vs_winner_bps !== undefined ? `, ${l.vs_winner_bps} bps behind` : ""})`).join(", ") || "—";
  }
  return typeof value === "object" ? JSON.stringify(value) : String(value);
}

function pair(kind, item) {
  const s = item.summary;
  if (s.side) return `${s.side} ${s.source_amount} → ${s.target_amount} (${s.fiat}/${s.token})`;
  const sold = s.sold_amount ?? s.sell_amount;
  const side = (amountValue, token) => (amountValue === null || amountValue === undefined
    ? tokenNode(s.chain_id, token) : amountNode(s.chain_id, token, amountValue));
  return [side(sold, s.sell_token), " → ", side(s.buy_amount, s.buy_token)];
}

function countdown(expiresAt, status) {
  if (!expiresAt || !["quoted", "QUOTED", "AWAITING_FUNDS"].includes(status)) return "";
  const left = Math.round((Date.parse(expiresAt) - simNow()) / 1000);
  return left > 0 ? `expires in ${left} s` : "expiry due";
}

export class ObjectsView {
  constructor(kind) {
    this.kind = kind;
    this.items = new Map();
    this.openId = null;
    this.filters = { status: "", taker: "", maker: "" };
    this.rows = h("tbody");
    this.empty = h("p", { class: "empty", hidden: true });
    const columns = ["created", "id", "status", "what", "makers", kind === "rfqs" ? "winner" : null, "expiry"];
    this.table = h(
      "table",
      { class: "list", "aria-label": `${TITLES[kind]} list` },
      h("thead", {}, h("tr", {}, columns.filter((c) => c !== null).map((c) => h("th", {}, c)))),
      this.rows,
    );
    this.split = new Split([this.table, this.empty], "timeline");
    this.detail = this.split.detail;
    this.root = h(
      "section",
      { class: "view", "aria-label": TITLES[kind] },
      h("h2", {}, TITLES[kind]),
      this.filterBar(),
      this.split.root,
    );
    on(kind, (payload) => this.live(payload.items));
    on("state", () => this.load());
    setInterval(() => this.tick(), 1000);
  }

  // The status choices are the server's (the list's `statuses`), filled in by the first load.
  filterBar() {
    const status = h("select", { onchange: (e) => this.setFilter("status", e.target.value) },
      h("option", { value: "" }, "any"));
    this.statusSelect = status;
    const taker = h("input", { type: "text", size: 18, onchange: (e) => this.setFilter("taker", e.target.value.trim()) });
    const maker = h("input", { type: "text", size: 14, onchange: (e) => this.setFilter("maker", e.target.value.trim()) });
    return h("div", { class: "filters" }, field("status", status), field(this.kind === "transfers" ? "wallet" : "taker", taker), field("maker", maker));
  }

  setFilter(name, value) {
    this.filters[name] = value;
    this.load();
  }

  async load() {
    const page = await get(`/_sim/${this.kind}`, { ...this.filters, limit: KEPT_ON_PAGE });
    if (this.statusSelect.options.length === 1) {
      this.statusSelect.append(...page.statuses.map((s) => h("option", { value: s }, s)));
    }
    this.items = new Map(page.items.map((item) => [item.id, item]));
    this.render();
  }

  matches(item) {
    const f = this.filters;
    if (f.status && item.status.toLowerCase() !== f.status.toLowerCase()) return false;
    const taker = item.summary.taker || item.summary.wallet || item.summary.maker;
    if (f.taker && (!taker || taker.toLowerCase() !== f.taker.toLowerCase())) return false;
    if (f.maker) {
      const wanted = f.maker.toLowerCase();
      if (!item.makers.some((m) => m.wallet.toLowerCase() === wanted || (m.name || "") === wanted)) return false;
    }
    return true;
  }

  live(items) {
    for (const item of items) {
      if (this.matches(item)) this.items.set(item.id, item);
      else this.items.delete(item.id);
      if (item.id === this.openId) this.open(item.id);
    }
    this.render();
  }

  sorted() {
    const all = [...this.items.values()].sort((a, b) => (a.created_at < b.created_at ? 1 : -1));
    for (const extra of all.slice(KEPT_ON_PAGE)) this.items.delete(extra.id);
    return all.slice(0, KEPT_ON_PAGE);
  }

  render() {
    const shownItems = this.sorted();
    replace(this.rows, shownItems.map((item) => this.row(item)));
    const filtered = Object.values(this.filters).some(Boolean);
    this.table.hidden = shownItems.length === 0;
    this.empty.hidden = shownItems.length > 0;
    this.empty.textContent = filtered ? `No ${TITLES[this.kind]} match these filters.` : `No ${TITLES[this.kind]} yet.`;
  }

  row(item) {
    const winners = item.summary.winners || [];
    return h(
      "tr",
      { dataset: { id: item.id }, class: item.id === this.openId ? "open" : "" },
      h("td", {}, time(item.created_at)),
      h("td", {}, h("a", { href: `#/${this.kind}/${item.id}` }, item.id)),
      h("td", { class: `status s-${item.status}` }, item.status),
      h("td", { class: "what" }, pair(this.kind, item)),
      h("td", {}, item.makers.map(makerName).join(", ")),
      this.kind === "rfqs" ? h("td", {}, winners.map(makerName).join(" + ")) : null,
      h("td", { class: "countdown", dataset: { expires: item.summary.expires_at || "", status: item.status } },
        countdown(item.summary.expires_at, item.status)),
    );
  }

  tick() {
    for (const cell of this.rows.querySelectorAll("td.countdown")) {
      cell.textContent = countdown(cell.dataset.expires, cell.dataset.status);
    }
    const own = this.detail.querySelector(".countdown");
    if (own) own.textContent = countdown(own.dataset.expires, own.dataset.status);
  }

  async open(id) {
    this.openId = id;
    for (const row of this.rows.querySelectorAll("tr")) row.classList.toggle("open", row.dataset.id === id);
    let timeline;
    try {
      timeline = await get(`/_sim/${this.kind}/${encodeURIComponent(id)}`);
    } catch (error) {
      if (this.openId === id) this.split.show(`#/${this.kind}`, h("p", { class: "error" }, String(error.message)));
      return;
    }
    if (this.openId !== id) return;
    this.split.show(`#/${this.kind}`, this.drawDetail(timeline));
  }

  close() {
    this.openId = null;
    for (const row of this.rows.querySelectorAll("tr.open")) row.classList.remove("open");
    this.split.hide();
  }

  drawDetail(t) {
    const facts = Object.entries(t.summary).filter(([, v]) => typeof v !== "object" || v === null);
    return [
      h("h3", {}, `${t.id} · `, h("span", { class: `status s-${t.status}` }, t.status), " ",
        h("span", { class: "countdown", dataset: { expires: t.summary.expires_at || "", status: t.status } },
          countdown(t.summary.expires_at, t.status))),
      h("dl", { class: "facts", "aria-label": "summary" },
        facts.map(([k, v]) => [h("dt", {}, k), h("dd", { dataset: { fact: k } }, shown(this.kind, t.summary, k, v))])),
      this.kind === "rfqs" ? waterfall(t) : null,
      this.kind === "rfqs" ? quotes(t) : null,
      h("h4", {}, "Steps"),
      h("table", { class: "steps", "aria-label": "steps" },
        h("thead", {}, h("tr", {}, ["+ms", "step", "details"].map((c) => h("th", {}, c)))),
        h("tbody", {}, t.steps.map((step) => stepRow(this.kind, t.summary, step)))),
      t.webhooks.length ? h("h4", {}, "Webhook deliveries") : null,
      t.webhooks.length ? h("ul", {}, t.webhooks.map((d) => h("li", {}, `${d.event_type} → ${d.endpoint_id}: ${d.status}, ${d.attempts.length} attempt(s)`))) : null,
    ];
  }
}

function stepRow(kind, summary, step) {
  const { at, offset_ms: offset, kind: stepKind, ...rest } = step;
  const details = Object.entries(rest)
    .filter(([, v]) => v !== null && !(Array.isArray(v) && v.length === 0))
    .flatMap(([k, v], i) => [i ? " · " : "", `${k}: `, shown(kind, summary, k, v)]);
  return h("tr", { class: `k-${stepKind}` }, h("td", {}, offset.toFixed(1)), h("td", {}, stepKind), h("td", {}, details));
}

// Each maker asked: its final answer (the one carrying its signed order, if any), by ask.
function answersByAsk(t) {
  const answers = t.steps.filter((s) => s.kind === "answered");
  return t.steps.filter((s) => s.kind === "asked").map((ask) => {
    const mine = answers.filter((a) => a.quote_id === ask.quote_id);
    return { ask, answer: mine[mine.length - 1], offer: mine.find((a) => a.buy_amount !== null && a.buy_amount !== undefined), all: mine };
  });
}

// Who quoted what: per maker asked, its order's amounts in token units and its rate, and for a
// losing quote the winner's rate against its own and the difference in bps.
function quotes(t) {
  const s = t.summary;
  const selected = t.steps.find((step) => step.kind === "selected");
  const winners = new Set((selected ? selected.winners : []).map((w) => w.wallet));
  const losers = new Map((selected ? selected.losers : []).map((l) => [l.wallet, l]));
  const rows = answersByAsk(t);
  const winning = rows.find((r) => winners.has(r.ask.maker) && r.offer);
  const pairName = `${symbol(s.chain_id, s.buy_token)}/${symbol(s.chain_id, s.sell_token)}`;
  const against = (r) => {
    if (winners.has(r.ask.maker) && r.answer && r.answer.outcome === "quoted") return h("span", { class: "winner" }, "winner");
    const lost = losers.get(r.ask.maker);
    if (!lost) return r.answer ? "" : "waiting";
    if (lost.vs_winner_bps === null || lost.vs_winner_bps === undefined || !winning) return lost.why;
    const name = winning.ask.maker_name || short(winning.ask.maker, 10);
    return `${lost.why}: ${lost.vs_winner_bps} bps below ${name}'s ${rate(winning.offer.rate_ray)}`;
  };
  return h("table", { class: "quotes", "aria-label": "quotes" },
    h("caption", {}, "Who quoted what: what each maker's signed order asks of the taker (fee included) and gives it"),
    h("thead", {}, h("tr", {}, ["maker", "answer", "taker pays", "taker receives", `rate ${pairName}`, "against the winner"].map((c) => h("th", {}, c)))),
    h("tbody", {}, rows.map((r) => {
      const name = r.ask.maker_name || r.ask.maker;
      const outcome = r.answer ? r.answer.outcome : "waiting";
      const o = r.offer || {};
      return h("tr", { dataset: { maker: name, outcome } },
        h("td", { title: r.ask.maker }, name),
        h("td", {}, outcome, r.answer && r.answer.reason ? ` (${r.answer.reason})` : ""),
        h("td", { class: "sell" }, r.offer ? [amountNode(s.chain_id, s.sell_token, o.sell_amount),
          h("span", { class: "fee" }, "fee ", amountNode(s.chain_id, s.sell_token, o.fee_amount))] : "—"),
        h("td", { class: "buy" }, r.offer ? amountNode(s.chain_id, s.buy_token, o.buy_amount) : "—"),
        h("td", { class: "rate" }, r.offer ? rateNode(s.chain_id, s.sell_token, s.buy_token, o.rate_ray, false) : "—"),
        h("td", { class: "against" }, against(r)));
    })));
}

const COLOURS = {
  quoted: "#2e7d32", declined: "#8d6e63", silent: "#9e9e9e", late: "#ef6c00",
  rejected: "#c62828", disconnected: "#6a1b9a", unverified: "#ad1457",
};

function waterfall(t) {
  // One row per ask: from when it was sent to its answer (or the end of the wait), coloured by
  // outcome; the reply budget as a vertical line.
  const budget = t.summary.reply_budget_ms || 750;
  const winners = new Set((t.summary.winners || []).map((w) => w.wallet));
  const rows = answersByAsk(t);
  const ends = rows.map((r) => (r.answer ? r.ask.offset_ms + r.answer.latency_ms : r.ask.offset_ms));
  const span = Math.max(budget * 1.15, ...ends.map((e) => e * 1.05), 50);
  const width = 760;
  const left = 150;
  const right = 190;
  const rowH = 22;
  const plot = width - left - right;
  const x = (msValue) => left + (Math.min(msValue, span) / span) * plot;
  const height = rows.length * rowH + 34;
  const chart = svg("svg", { class: "waterfall", viewBox: `0 0 ${width} ${height}`, width, height, role: "img", "aria-label": "waterfall of maker replies" },
    svg("line", { x1: x(budget), x2: x(budget), y1: 4, y2: height - 18, class: "budget" }),
    svg("text", { x: x(budget) + 3, y: height - 6, class: "axis" }, `reply budget ${budget} ms`),
    svg("text", { x: left, y: height - 6, class: "axis" }, "0"),
    rows.map((r, i) => {
      const y = 6 + i * rowH;
      const name = r.ask.maker_name || short(r.ask.maker, 12);
      const outcome = r.answer ? r.answer.outcome : "waiting";
      const latency = r.answer ? r.answer.latency_ms : null;
      const start = r.ask.offset_ms;
      const end = latency === null ? start : start + latency;
      const won = winners.has(r.ask.maker) && outcome === "quoted";
      const label = `${outcome}${r.answer && r.answer.reason ? ` (${r.answer.reason})` : ""} ${ms(latency)}${won ? " ★ winner" : ""}`;
      return svg("g", { class: "ask" },
        svg("text", { x: 4, y: y + 14, class: "maker" }, `${name}${r.ask.round === "bundle" ? " (leg)" : ""}`),
        svg("rect", { x: x(start), y: y + 3, width: Math.max(2, x(end) - x(start)), height: rowH - 8, fill: COLOURS[outcome] || "#607d8b" }),
        svg("text", { x: width - right + 6, y: y + 14, class: won ? "outcome winner" : "outcome" }, label));
    }),
  );
  const legend = h("ul", { class: "answers", "aria-label": "answers" }, rows.map((r) => {
    const name = r.ask.maker_name || r.ask.maker;
    const outcome = r.answer ? r.answer.outcome : "waiting";
    const won = winners.has(r.ask.maker) && outcome === "quoted";
    return h("li", { dataset: { maker: name, outcome } },
      h("strong", {}, name), ` ${outcome}`, r.answer && r.answer.reason ? ` (${r.answer.reason})` : "",
      ` in ${ms(r.answer ? r.answer.latency_ms : null)}`, won ? h("span", { class: "winner" }, " — winner") : "",
      r.answer && r.answer.detail ? h("span", { class: "detail-text" }, ` · ${r.answer.detail}`) : "");
  }));
  return h("figure", {}, chart, legend, h("figcaption", {}, "Each maker's answer from its ask; the line is the reply budget."));
}

