// Every maker online (the fleet's and integrators' bots): reply latency p50/p99 against the
// budget, answers by outcome, a latency histogram with the budget line; the simulated fleet's
// behaviour, latency and online switch, changed with PATCH /_sim/makers/{name}.

import { get, send } from "./api.js";
import { field, h, ms, orElse, replace, short, svg } from "./dom.js";
import { on } from "./live.js";

const BEHAVIOURS = ["normal", "silent", "late", "decline", "bad_signature", "underfunded", "flaky"];
const OUTCOMES = ["quoted", "declined", "silent", "late", "rejected", "disconnected", "unverified"];

function histogram(replies, budget) {
  const width = 240;
  const height = 48;
  const bins = replies.histogram;
  const top = Math.max(1, ...bins);
  const barW = width / bins.length;
  const budgetX = (budget / replies.histogram_bin_ms) * barW;
  return svg("svg", { class: "histogram", viewBox: `0 0 ${width} ${height}`, width, height, role: "img", "aria-label": "reply latency histogram" },
    bins.map((count, i) => svg("rect", { x: i * barW + 1, y: height - (count / top) * (height - 6), width: barW - 2, height: (count / top) * (height - 6), class: "bar" })),
    budgetX <= width ? svg("line", { x1: budgetX, x2: budgetX, y1: 0, y2: height, class: "budget" }) : null);
}

// One row per maker: its connections (one per API key, live and test) grouped by wallet. The
// replies are the wallet's, the same on each of its connections.
export function byWallet(online) {
  const makers = new Map();
  for (const connection of online) {
    const key = connection.wallet.toLowerCase();
    if (!makers.has(key)) makers.set(key, { ...connection, keys: [] });
    makers.get(key).keys.push({ maker_id: connection.maker_id, environment: connection.environment });
  }
  return [...makers.values()];
}

export class MakersView {
  constructor() {
    this.body = h("div");
    this.message = h("p", { class: "note", role: "status" });
    this.root = h("section", { class: "view", "aria-label": "Makers" }, h("h2", {}, "Makers"), this.message, this.body);
    on("makers", (view) => this.render(view));
    on("state", () => this.load());
  }

  async load() {
    this.render(await get("/_sim/makers"));
  }

  async change(name, changes) {
    try {
      this.render(await send("PATCH", `/_sim/makers/${encodeURIComponent(name)}`, changes));
      this.message.textContent = `${name}: ${JSON.stringify(changes)}`;
    } catch (error) {
      this.message.textContent = `${name}: ${error.message}`;
    }
  }

  render(view) {
    const budget = view.reply_budget_ms;
    const online = orElse(byWallet(view.online), "No maker is connected to the maker stream.", (makers) => h("table", { class: "list", "aria-label": "makers online" },
      h("thead", {}, h("tr", {}, ["maker", "wallet", "keys", "p50", "p99", ...OUTCOMES, "latency histogram"].map((c) => h("th", {}, c)))),
      h("tbody", {}, makers.map((m) => h("tr", { dataset: { maker: m.name || m.wallet } },
        h("td", {}, m.name || "(bot)"), h("td", { title: m.wallet }, short(m.wallet, 12)),
        h("td", { class: "keys" }, h("ul", { class: "keys" }, m.keys.map((k) => h("li", {}, `${k.maker_id} (${k.environment})`)))),
        h("td", { class: m.replies.p50_ms > budget ? "over" : "" }, ms(m.replies.p50_ms)),
        h("td", { class: m.replies.p99_ms > budget ? "over" : "" }, ms(m.replies.p99_ms)),
        OUTCOMES.map((o) => h("td", { class: "count" }, m.replies.counts[o] || 0)),
        h("td", {}, histogram(m.replies, budget)))))));
    const fleet = orElse(view.fleet.map((m) => this.controls(m)), "No simulated fleet runs in this simulator.", (members) => h("div", { class: "fleet" }, members));
    replace(this.body, h("p", {}, `Reply budget ${budget} ms (the line in each histogram).`), online,
      h("h3", {}, "Simulated fleet"), fleet);
  }

  controls(member) {
    const name = member.name;
    const behaviour = h("select", { onchange: (e) => this.change(name, { behaviour: e.target.value }) },
      BEHAVIOURS.map((b) => h("option", { value: b, selected: b === member.behaviour }, b)));
    const latencyMs = h("input", { type: "number", min: 0, max: 60000, size: 6, value: member.config.latency && member.config.latency.kind === "fixed" ? member.config.latency.ms : "" });
    const onlineBox = h("input", { type: "checkbox", checked: member.online, onchange: (e) => this.change(name, { online: e.target.checked }) });
    return h("fieldset", { dataset: { maker: name } }, h("legend", {}, `${name} · ${member.connected ? "connected" : "offline"} · ${member.live_quotes} live quotes`),
      field(`${name} behaviour`, behaviour),
      field(`${name} latency ms`, latencyMs),
      h("button", { type: "button", onclick: () => this.change(name, { latency: { kind: "fixed", ms: Number(latencyMs.value || 0) } }) }, `Set ${name} latency`),
      field(`${name} online`, onlineBox));
  }
}
