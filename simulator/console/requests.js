// The request journal live (GET /_sim/requests?summary=true, then the stream's entries): status,
// latency, key prefix; a row opens request and response (headers, body pretty-printed, read
// when opened) and copies the request as a curl command. Errors are grouped by path and status.

import { get } from "./api.js";
import { Split, field, h, ms, orElse, pretty, replace, time } from "./dom.js";
import { on } from "./live.js";

const KEPT_ON_PAGE = 500;

function shellQuote(text) {
  return `'${String(text).replaceAll("'", "'\\''")}'`;
}

export function curlOf(entry, origin) {
  const url = `${origin}${entry.path}${entry.query ? `?${entry.query}` : ""}`;
  const parts = ["curl", "-s"];
  if (entry.method !== "GET") parts.push("-X", entry.method);
  parts.push(shellQuote(url));
  for (const [name, value] of entry.request.headers) {
    if (/^(host|content-length|connection|accept-encoding|user-agent)$/i.test(name)) continue;
    parts.push("-H", shellQuote(`${name}: ${value}`));
  }
  if (entry.key_prefix) parts.push("-H", shellQuote(`Authorization: Bearer ${entry.key_prefix}.<secret>`));
  const body = entry.request.body;
  if (body !== null && body !== undefined && !(typeof body === "object" && body.omitted)) {
    parts.push("--data-raw", shellQuote(typeof body === "string" ? body : JSON.stringify(body)));
  }
  return parts.join(" ");
}

export class RequestsView {
  constructor() {
    this.entries = new Map();
    this.filters = { path: "", status: "" };
    this.openSeq = null;
    this.rows = h("tbody");
    this.errors = h("div", { class: "errors", "aria-label": "errors grouped" });
    this.empty = h("p", { class: "empty", hidden: true });
    this.table = h("table", { class: "list", "aria-label": "requests list" },
      h("thead", {}, h("tr", {}, ["at", "method", "path", "status", "latency", "key"].map((c) => h("th", {}, c)))),
      this.rows);
    this.split = new Split([this.table, this.empty], "request");
    this.detail = this.split.detail;
    const path = h("input", { type: "text", size: 24, placeholder: "/v2/rfq/*", onchange: (e) => this.setFilter("path", e.target.value.trim()) });
    const status = h("input", { type: "number", min: 100, max: 599, onchange: (e) => this.setFilter("status", e.target.value) });
    this.root = h("section", { class: "view", "aria-label": "Requests" },
      h("h2", {}, "Requests"),
      h("div", { class: "filters" }, field("path", path), field("status code", status)),
      h("h3", {}, "Errors"), this.errors,
      h("h3", {}, "Journal"), this.split.root);
    on("requests", (payload) => this.live(payload.requests));
    on("state", () => this.load());
  }

  setFilter(name, value) {
    this.filters[name] = value;
    this.load();
  }

  async load() {
    const page = await get("/_sim/requests", { ...this.filters, limit: KEPT_ON_PAGE, summary: true });
    this.entries = new Map(page.requests.map((e) => [e.seq, e]));
    this.render();
  }

  matches(entry) {
    const { path, status } = this.filters;
    if (status && String(entry.status) !== String(status)) return false;
    if (path) {
      if (path.endsWith("*") ? !entry.path.startsWith(path.slice(0, -1)) : entry.path !== path) return false;
    }
    return true;
  }

  live(entries) {
    for (const entry of entries) if (this.matches(entry)) this.entries.set(entry.seq, entry);
    this.render();
  }

  render() {
    const all = [...this.entries.values()].sort((a, b) => b.seq - a.seq);
    for (const extra of all.slice(KEPT_ON_PAGE)) this.entries.delete(extra.seq);
    const shown = all.slice(0, KEPT_ON_PAGE);
    replace(this.rows, shown.map((e) => h("tr", { class: [e.status >= 400 ? "failed" : "", e.seq === this.openSeq ? "open" : ""].join(" ").trim(), dataset: { seq: e.seq } },
      h("td", {}, time(e.at)), h("td", {}, e.method),
      h("td", {}, h("a", { href: `#/requests/${e.seq}` }, e.path)),
      h("td", { class: "status" }, e.status), h("td", {}, ms(e.latency_ms)), h("td", {}, e.key_prefix ?? "—"))));
    const groups = new Map();
    for (const e of shown.filter((x) => x.status >= 400)) {
      const key = `${e.method} ${e.path} → ${e.status}`;
      groups.set(key, (groups.get(key) || 0) + 1);
    }
    const grouped = [...groups.entries()].map(([key, count]) => h("li", {}, `${count} × ${key}`));
    replace(this.errors, orElse(grouped, "No errors among the requests shown.", (items) => h("ul", {}, items)));
    const filtered = Boolean(this.filters.path || this.filters.status);
    this.table.hidden = shown.length === 0;
    this.empty.hidden = shown.length > 0;
    this.empty.textContent = filtered ? "No requests match these filters." : "No requests recorded yet.";
  }

  async open(seq) {
    this.openSeq = Number(seq);
    for (const row of this.rows.querySelectorAll("tr")) row.classList.toggle("open", Number(row.dataset.seq) === this.openSeq);
    // Read whole by its number: a link to one older than the rows on the page opens it too.
    const found = (await get("/_sim/requests", { seq: this.openSeq, limit: 1 })).requests;
    const entry = found.find((e) => e.seq === this.openSeq);
    if (this.openSeq !== Number(seq)) return;
    if (!entry) {
      this.split.show("#/requests", h("p", {}, `Request ${seq} is no longer kept (journal.kept_s).`));
      return;
    }
    const curl = curlOf(entry, window.location.origin);
    const copied = h("span", { class: "note", role: "status" });
    const part = (title, side) => h("div", { class: "exchange" }, h("h4", {}, title),
      h("table", { class: "headers", "aria-label": `${title} headers` },
        h("tbody", {}, side.headers.map(([n, v]) => h("tr", {}, h("th", {}, n), h("td", {}, v))))),
      h("pre", { class: "body", "aria-label": `${title} body` }, side.body === null ? "(no body)" : pretty(side.body)));
    this.split.show("#/requests",
      h("h3", {}, `${entry.method} ${entry.path} → ${entry.status} · ${entry.request_id}`),
      h("p", {}, h("button", { type: "button", onclick: async () => {
        try {
          await navigator.clipboard.writeText(curl);
          copied.textContent = "copied";
        } catch {
          copied.textContent = "select the command below to copy it";
        }
      } }, "Copy as curl"), " ", copied),
      h("pre", { class: "curl", "aria-label": "curl command" }, curl),
      part("Request", entry.request), part("Response", entry.response));
  }

  close() {
    this.openSeq = null;
    for (const row of this.rows.querySelectorAll("tr.open")) row.classList.remove("open");
    this.split.hide();
  }
}
