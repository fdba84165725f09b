// Webhooks: every endpoint, and every delivery with each attempt (status, latency, error, next
// retry), the event payload and a Redeliver button (POST .../redeliver).

import { get, send } from "./api.js";
import { h, ms, orElse, pretty, replace, time } from "./dom.js";
import { on } from "./live.js";

export class WebhooksView {
  constructor() {
    this.deliveries = new Map();
    this.endpointIds = new Set();
    this.endpoints = h("div");
    this.list = h("div", { class: "deliveries", "aria-label": "deliveries" });
    this.message = h("p", { class: "note", role: "status" });
    this.root = h("section", { class: "view", "aria-label": "Webhooks" },
      h("h2", {}, "Webhooks"), this.message,
      h("h3", {}, "Endpoints"), this.endpoints,
      h("h3", {}, "Deliveries"), this.list);
    on("deliveries", (payload) => this.live(payload.deliveries));
    on("state", () => this.load());
  }

  async load() {
    const [endpoints, deliveries] = await Promise.all([get("/_sim/webhooks/endpoints"), get("/_sim/webhooks/deliveries", { limit: 200 })]);
    this.showEndpoints(endpoints.endpoints);
    this.deliveries = new Map(deliveries.deliveries.map((d) => [d.id, d]));
    this.render();
  }

  showEndpoints(endpoints) {
    this.endpointIds = new Set(endpoints.map((e) => e.id));
    replace(this.endpoints, orElse(endpoints.map((e) => h("tr", {},
      h("td", {}, e.id), h("td", {}, e.partner_id), h("td", {}, e.url), h("td", {}, e.event_types.join(", ")), h("td", {}, e.status), h("td", {}, time(e.created_at)))),
    "No webhook endpoint registered (POST /v1/webhooks registers one).",
    (rows) => h("table", { class: "list", "aria-label": "endpoints" },
      h("thead", {}, h("tr", {}, ["id", "partner", "url", "events", "status", "created"].map((c) => h("th", {}, c)))),
      h("tbody", {}, rows))));
  }

  live(deliveries) {
    for (const d of deliveries) this.deliveries.set(d.id, d);
    if (deliveries.some((d) => !this.endpointIds.has(d.endpoint_id))) {
      get("/_sim/webhooks/endpoints").then((e) => this.showEndpoints(e.endpoints));
    }
    this.render();
  }

  async redeliver(id) {
    try {
      const delivery = await send("POST", `/_sim/webhooks/deliveries/${encodeURIComponent(id)}/redeliver`);
      this.deliveries.set(delivery.id, delivery);
      this.render();
      this.message.textContent = `${id}: redelivered`;
    } catch (error) {
      this.message.textContent = `${id}: ${error.message}`;
    }
  }

  render() {
    const all = [...this.deliveries.values()].sort((a, b) => (a.created_at < b.created_at ? 1 : -1));
    replace(this.list, orElse(all.map((d) => h("article", { class: `delivery d-${d.status}`, dataset: { id: d.id }, "aria-label": `delivery ${d.id}` },
      h("h4", {}, `${d.event_type} · ${d.id} → ${d.endpoint_id} · ${d.status}`,
        d.next_attempt_at ? ` · next retry ${time(d.next_attempt_at)}` : ""),
      h("button", { type: "button", onclick: () => this.redeliver(d.id) }, "Redeliver"),
      h("table", { class: "attempts", "aria-label": `attempts of ${d.id}` },
        h("thead", {}, h("tr", {}, ["#", "started", "HTTP status", "latency", "error", "outcome", "kind"].map((c) => h("th", {}, c)))),
        h("tbody", {}, d.attempts.map((a) => h("tr", { class: `a-${a.outcome}` },
          h("td", {}, a.attempt), h("td", {}, time(a.started_at)), h("td", { class: "http-status" }, a.response_status ?? "—"),
          h("td", {}, ms(a.latency_ms)), h("td", {}, a.error ?? ""), h("td", {}, a.outcome),
          h("td", {}, [a.manual ? "manual" : "scheduled", a.duplicate ? "duplicate" : ""].filter(Boolean).join(", ")))))),
      h("details", {}, h("summary", {}, "event payload"), h("pre", {}, pretty(d.event)))),
    ), "No webhook delivery yet."));
  }
}
