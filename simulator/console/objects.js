// RFQs, v1 swaps, limit orders and ramp transfers: a live list (GET /_sim/<kind>, then the
// stream's items) and one object's timeline (GET /_sim/<kind>/<id>). An RFQ's timeline is drawn
// as a waterfall of its makers' answers against the reply-budget line.

import { get } from "./api.js";
import { field, h, ms, replace, short, svg, time } from "./dom.js";
import { on } from "./live.js";
import { amount, simNow, symbol } from "./state.js";

const KEPT_ON_PAGE = 500;
const STATUSES = {
  rfqs: ["soliciting", "quoted", "no_quote", "submitted", "filled", "failed", "expired", "error"],
  swaps: ["QUOTED", "SUBMITTED", "FILLED", "EXPIRED", "CANCELLED"],
  "limit-orders": ["ACTIVE", "FILLED", "CANCELLED", "EXPIRED", "SUPERSEDED"],
  transfers: ["AWAITING_FUNDS", "PROCESSING", "COMPLETED", "FAILED", "REFUNDED", "CANCELLED", "EXPIRED"],
};
const TITLES = { rfqs: "RFQs", swaps: "v1 swaps", "limit-orders": "v1 limit orders", transfers: "Ramp transfers" };

function makerName(ref) {
  return ref.name || short(ref.wallet, 10);
}

function pair(item) {
  const s = item.summary;
  if (s.side) return `${s.side} ${s.source_amount} → ${s.target_amount} (${s.fiat}/${s.token})`;
  const sell = symbol(s.chain_id, s.sell_token);
  const buy = symbol(s.chain_id, s.buy_token);
  const size = s.sell_amount
    ? amount(s.chain_id, s.sell_token, s.sell_amount)
    : amount(s.chain_id, s.buy_token, s.buy_amount);
  return `${sell} → ${buy} · ${size ?? ""}`;
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
    this.detail = h("section", { class: "detail", "aria-label": "timeline" });
    this.root = h(
      "section",
      { class: "view", "aria-label": TITLES[kind] },
      h("h2", {}, TITLES[kind]),
      this.filterBar(),
      h(
        "table",
        { class: "list", "aria-label": `${TITLES[kind]} list` },
        h("thead", {}, h("tr", {}, ["created", "id", "status", "what", "makers", kind === "rfqs" ? "winner" : "", "expiry"].map((c) => h("th", {}, c)))),
        this.rows,
      ),
      this.detail,
    );
    on(kind, (payload) => this.live(payload.items));
    on("state", () => this.load());
    setInterval(() => this.tick(), 1000);
  }

  filterBar() {
    const status = h("select", { onchange: (e) => this.setFilter("status", e.target.value) },
      h("option", { value: "" }, "any"), STATUSES[this.kind].map((s) => h("option", { value: s }, s)));
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
    replace(this.rows, this.sorted().map((item) => this.row(item)));
  }

  row(item) {
    const winners = item.summary.winners || [];
    return h(
      "tr",
      { dataset: { id: item.id }, class: item.id === this.openId ? "open" : "" },
      h("td", {}, time(item.created_at)),
      h("td", {}, h("a", { href: `#/${this.kind}/${item.id}` }, item.id)),
      h("td", { class: `status s-${item.status}` }, item.status),
      h("td", {}, pair(item)),
      h("td", {}, item.makers.map(makerName).join(", ")),
      h("td", {}, winners.map(makerName).join(" + ")),
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
    let timeline;
    try {
      timeline = await get(`/_sim/${this.kind}/${id}`);
    } catch (error) {
      replace(this.detail, h("p", { class: "error" }, String(error.message)));
      return;
    }
    if (this.openId !== id) return;
    replace(this.detail, this.drawDetail(timeline));
  }

  close() {
    this.openId = null;
    replace(this.detail);
  }

  drawDetail(t) {
    const facts = Object.entries(t.summary).filter(([, v]) => typeof v !== "object" || v === null);
    return [
      h("h3", {}, `${t.id} · `, h("span", { class: `status s-${t.status}` }, t.status), " ",
        h("span", { class: "countdown", dataset: { expires: t.summary.expires_at || "", status: t.status } },
          countdown(t.summary.expires_at, t.status))),
      h("dl", { class: "facts" }, facts.map(([k, v]) => [h("dt", {}, k), h("dd", {}, v === null ? "—" : String(v))])),
      this.kind === "rfqs" ? waterfall(t) : null,
      h("h4", {}, "Steps"),
      h("table", { class: "steps", "aria-label": "steps" },
        h("thead", {}, h("tr", {}, ["+ms", "step", "details"].map((c) => h("th", {}, c)))),
        h("tbody", {}, t.steps.map(stepRow))),
      t.webhooks.length ? h("h4", {}, "Webhook deliveries") : null,
      t.webhooks.map((d) => h("p", {}, `${d.event_type} → ${d.endpoint_id}: ${d.status}, ${d.attempts.length} attempt(s)`)),
    ];
  }
}

function stepRow(step) {
  const { at, offset_ms: offset, kind, ...rest } = step;
  const details = Object.entries(rest)
    .filter(([, v]) => v !== null && !(Array.isArray(v) && v.length === 0))
    .map(([k, v]) => `${k}: ${typeof v === "object" ? JSON.stringify(v) : v}`)
    .join(" · ");
  return h("tr", { class: `k-${kind}` }, h("td", {}, offset.toFixed(1)), h("td", {}, kind), h("td", {}, details));
}

const COLOURS = {
  quoted: "#2e7d32", declined: "#8d6e63", silent: "#9e9e9e", late: "#ef6c00",
  rejected: "#c62828", disconnected: "#6a1b9a", unverified: "#ad1457",
};

function waterfall(t) {
  // One row per ask: from when it was sent to its answer (or the end of the wait), coloured by
  // outcome; the reply budget as a vertical line.
  const budget = t.summary.reply_budget_ms || 750;
  const asks = t.steps.filter((s) => s.kind === "asked");
  const answers = t.steps.filter((s) => s.kind === "answered");
  const winners = new Set((t.summary.winners || []).map((w) => w.wallet));
  const rows = asks.map((ask) => {
    const mine = answers.filter((a) => a.quote_id === ask.quote_id);
    const last = mine[mine.length - 1];
    return { ask, answer: last, all: mine };
  });
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

