// The console's entry: load the simulator's description, build every view, follow the location
// hash (#/rfqs, #/rfqs/<id>, #/requests/<seq>, #/makers, #/webhooks, #/venue, ...), go live.

import { get } from "./api.js";
import { h, replace } from "./dom.js";
import { on, start } from "./live.js";
import { MakersView } from "./makers.js";
import { ObjectsView } from "./objects.js";
import { RequestsView } from "./requests.js";
import { setClock, setInfo } from "./state.js";
import { VenueView } from "./venue.js";
import { WebhooksView } from "./webhooks.js";

const TABS = [
  ["rfqs", "RFQs"], ["swaps", "Swaps"], ["limit-orders", "Limit orders"], ["transfers", "Transfers"],
  ["requests", "Requests"], ["makers", "Makers"], ["webhooks", "Webhooks"], ["venue", "Venue"],
];

async function main() {
  const info = await get("/_sim/info");
  setInfo(info);
  setClock(await get("/_sim/clock"));
  const views = {
    rfqs: new ObjectsView("rfqs"),
    swaps: new ObjectsView("swaps"),
    "limit-orders": new ObjectsView("limit-orders"),
    transfers: new ObjectsView("transfers"),
    requests: new RequestsView(),
    makers: new MakersView(),
    webhooks: new WebhooksView(),
    venue: new VenueView(),
  };
  const nav = document.getElementById("tabs");
  const main = document.getElementById("main");
  replace(nav, TABS.map(([id, label]) => h("a", { href: `#/${id}`, id: `tab-${id}` }, label)));
  replace(document.getElementById("version"), `rfqsim ${info.version} · seed ${info.seed} · ${info.api_url}`);
  const live = document.getElementById("live");
  on("clock", setClock);
  start((up) => {
    live.textContent = up ? "live" : "reconnecting…";
    live.className = up ? "up" : "down";
  });
  await Promise.all(Object.values(views).map((v) => v.load()));

  function route() {
    const [, tab = "rfqs", id] = window.location.hash.match(/^#\/([a-z-]+)(?:\/(.+))?$/) || [];
    const view = views[tab] || views.rfqs;
    for (const link of nav.querySelectorAll("a")) {
      if (link.id === `tab-${tab}`) link.setAttribute("aria-current", "page");
      else link.removeAttribute("aria-current");
    }
    replace(main, view.root);
    if (view.open) {
      if (id) view.open(decodeURIComponent(id));
      else view.close();
    }
    document.body.dataset.view = tab;
  }
  window.addEventListener("hashchange", route);
  route();
  document.body.dataset.ready = "true";
}

main().catch((error) => {
  replace(document.getElementById("main"), h("p", { class: "error" }, `The console could not start: ${error.message}`));
  throw error;
});
