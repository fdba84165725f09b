"""The console in a real browser (Debian's chromium, driven by Playwright) against a real
`rfqsim serve`: live updates without reload, the fleet's controls, the clock, webhook attempts
and Redeliver, hostile input rendered inert; who quoted what in an RFQ, amounts in token units,
details opening beside their list at a stable URL, one row per maker, no bare heading; no
request leaves 127.0.0.1 and no script error happens on any page (checked after every test).
Screenshots of every view are taken here too (docs/console.md shows them: `just
screenshots`)."""

from __future__ import annotations

import json
import os
import re
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import BrowserContext, Page, expect

from conformance.calls.ramp import Ramp, fresh_wallet
from conformance.calls.ramp_transfers import Transfers
from conformance.deployment.sim_control import SimControl
from conformance.wire.chain import Chain
from conformance.wire.client import Client
from rfqkit.wallets import Wallet
from rfqkit.webhook_receiver import WebhookReceiver
from rfqsim.pytest_plugin import RfqSim
from tests.integration.browser import Watched, chromium, chromium_path, screenshot_dir, watch
from tests.integration.firm_quotes import firm_quote as firm
from tests.integration.serve_process import serve

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("console-browser")]

CHAIN = 97
VIEWS = ("rfqs", "swaps", "limit-orders", "transfers", "requests", "makers", "webhooks", "venue")


@pytest.fixture(scope="module")
def sim(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RfqSim]:
    chromium_path()  # skip (or fail in CI) before starting anything
    with serve(tmp_path_factory.mktemp("console")) as served:
        yield RfqSim(served.api_url, served.info)


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory, sim: RfqSim) -> Iterator[BrowserContext]:
    with chromium(tmp_path_factory.mktemp("chromium-profile")) as context:
        yield context


@pytest.fixture
def console(browser: BrowserContext, sim: RfqSim) -> Iterator[Watched]:
    """The console open on a fresh simulator; afterwards: no script error, nothing foreign."""
    sim.reset()
    watched = watch(browser, sim.base_url)
    watched.page.goto(sim.base_url + "/", wait_until="domcontentloaded")
    watched.page.locator("body[data-ready=true]").wait_for()
    assert watched.page.url == sim.base_url + "/_sim/console"  # the root sent the browser here
    yield watched
    watched.page.close()
    watched.check()


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return screenshot_dir(tmp_path_factory.mktemp("screenshots"))


def go(page: Page, view: str) -> None:
    page.evaluate("view => { window.location.hash = view }", f"#/{view}")
    page.locator(f"body[data-view='{view.split('/')[0]}']").wait_for()


def unrolled_screenshot(page: Page, path: Path) -> None:
    """The whole page with its open detail panel unrolled: the panel scrolls inside a box as
    high as the window, so the window is made as high as the panel's content first."""
    height = page.evaluate(
        "() => Math.max(document.documentElement.scrollHeight,"
        " document.querySelector('aside.detail').scrollHeight + 120)"
    )
    page.set_viewport_size({"width": 1300, "height": min(int(height), 8000)})
    page.screenshot(path=str(path), full_page=True)


def answer(page: Page, maker: str) -> Any:
    return page.locator(f"ul.answers li[data-maker='{maker}']")


def test_a_firm_quote_appears_live_with_every_maker_its_reply_time_and_the_winner(
    console: Watched, sim: RfqSim, shots: Path
) -> None:
    page = console.page
    go(page, "rfqs")
    quote = firm(sim)  # made outside the page: it must arrive over the live stream
    row = page.locator(f"tr[data-id='{quote['rfqId']}']")
    row.locator("td.status", has_text="quoted").wait_for()
    row.get_by_role("link", name=quote["rfqId"]).click()
    page.locator("ul.answers li").nth(3).wait_for()
    names = page.locator("ul.answers li").evaluate_all("items => items.map(i => i.dataset.maker)")
    assert sorted(names) == ["alpha", "bravo", "charlie", "delta"]
    for name in names:
        text = answer(page, name).inner_text()
        assert " ms" in text, text  # its reply time
    winner = page.locator("ul.answers li", has=page.locator(".winner"))
    assert winner.count() == 1
    assert winner.get_attribute("data-outcome") == "quoted"
    unrolled_screenshot(page, shots / "rfq-timeline.png")


def test_a_maker_made_silent_from_the_page_is_silent_in_the_next_rfq(
    console: Watched, sim: RfqSim, shots: Path
) -> None:
    page = console.page
    go(page, "makers")
    page.get_by_label("alpha behaviour").select_option("silent")
    page.get_by_role("status").filter(has_text='alpha: {"behaviour":"silent"}').wait_for()
    page.screenshot(path=str(shots / "makers.png"), full_page=True)
    quote = firm(sim)
    go(page, f"rfqs/{quote['rfqId']}")
    answer(page, "alpha").and_(page.locator("[data-outcome='silent']")).wait_for()
    assert "silent" in answer(page, "alpha").inner_text()


def test_advance_clock_from_the_page_expires_a_live_quote_and_the_list_shows_it(
    console: Watched, sim: RfqSim, shots: Path
) -> None:
    page = console.page
    quote = firm(sim)
    go(page, "rfqs")
    row = page.locator(f"tr[data-id='{quote['rfqId']}']")
    row.locator("td.status", has_text="quoted").wait_for()
    page.screenshot(path=str(shots / "rfqs.png"), full_page=True)
    go(page, "venue")
    page.get_by_label("seconds", exact=True).fill("120")
    page.get_by_role("button", name="Advance clock").click()
    page.get_by_role("status").filter(has_text="clock advanced").wait_for()
    page.screenshot(path=str(shots / "venue.png"), full_page=True)
    go(page, "rfqs")
    row.locator("td.status", has_text="expired").wait_for()


def test_the_taker_filter_finds_an_rfq_hours_old_in_the_history_file(
    browser: BrowserContext, tmp_path: Path
) -> None:
    """An RFQ three hours old, its record and its timeline in the history file (a simulator
    of its own keeps only the newest two timelines in memory): typing its taker in the RFQs
    view's filter asks the server (GET /_sim/rfqs?taker=...), which finds it in the file."""
    env = {**os.environ, "RFQSIM_TIMELINES__KEPT": "2"}
    with serve(tmp_path, env=env) as served:
        sim = RfqSim(served.api_url, served.info)
        old = firm(sim, taker=1)
        sim.advance_clock(120)  # it expires
        deadline = time.monotonic() + 30
        while sim.call("GET", f"/_sim/rfqs/{old['rfqId']}")["status"] != "expired":
            assert time.monotonic() < deadline, "the RFQ never expired"
            time.sleep(0.05)
        sim.advance_clock(3 * 3600)  # at rest for hours: its record goes to the file
        newer = [firm(sim)["rfqId"] for _ in range(3)]  # the demo taker's, quoted now
        sim.advance_clock(1)  # a sweep: the timelines past the newest two, to the file
        while (store := sim.call("GET", "/_sim/runtime")["store"])["rfqs_in_memory"] != 3 or (
            store["writes_waiting"]
        ):
            assert time.monotonic() < deadline, store
            time.sleep(0.05)
        watched = watch(browser, sim.base_url)
        page = watched.page
        page.goto(sim.base_url + "/_sim/console#/rfqs", wait_until="domcontentloaded")
        page.locator("body[data-ready=true]").wait_for()
        view = page.get_by_role("region", name="RFQs")
        for rfq_id in newer:  # the oldest of them from the file
            view.locator(f"tr[data-id='{rfq_id}']").wait_for()
        asked = "/_sim/rfqs?"
        with page.expect_response(lambda r: asked in r.url and "taker=" in r.url) as answer:
            box = view.get_by_label("taker", exact=True)
            box.fill(sim.demo_wallets[1]["address"])
            box.press("Enter")
        assert answer.value.status == 200
        rows = view.get_by_role("table", name="RFQs list").locator("tbody tr")
        expect(rows).to_have_count(1)
        expect(rows.first).to_have_attribute("data-id", old["rfqId"])
        expect(rows.first.locator("td.status")).to_have_text("expired")
        rows.first.get_by_role("link").click()  # its steps, read back from the file
        expect(page.locator("aside.detail h3")).to_contain_text(old["rfqId"])
        page.close()
        watched.check()


def test_a_failing_endpoints_attempts_show_their_status_and_redeliver_adds_one(
    console: Watched, sim: RfqSim, shots: Path
) -> None:
    page = console.page
    issued = sim.call("POST", "/_sim/webhooks/certificates", {"hostnames": ["localhost"]})
    with WebhookReceiver(issued["cert_pem"], issued["key_pem"]) as receiver:
        receiver.default_status = 500
        request = urllib.request.Request(
            sim.base_url + "/v1/webhooks",
            data=json.dumps(
                {
                    "url": f"https://localhost:{receiver.port}/webhooks",
                    "eventTypes": ["rfq.expired"],
                }
            ).encode(),
            headers={
                "Authorization": f"Bearer {sim.demo_keys['taker-test']}",
                "Content-Type": "application/json",
            },
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            assert response.status == 201
        quote = firm(sim)
        sim.advance_clock(120)  # the quote expires: rfq.expired goes to the endpoint
        go(page, "webhooks")
        delivery = page.locator("article.delivery", has_text="rfq.expired").first
        delivery.locator("td.http-status", has_text="500").first.wait_for()
        scheduled = delivery.locator("tr", has_text="scheduled").count()
        assert scheduled >= 1
        delivery.get_by_role("button", name="Redeliver").click()
        delivery.locator("tr", has_text="manual").wait_for()
        assert "500" in delivery.locator("tr", has_text="manual").inner_text()
        page.screenshot(path=str(shots / "webhooks.png"), full_page=True)
        go(page, f"rfqs/{quote['rfqId']}")
        page.get_by_text("rfq.expired →").wait_for()  # the timeline joins its delivery


def test_a_hostile_request_body_renders_as_text_and_runs_nothing(
    console: Watched, sim: RfqSim, shots: Path
) -> None:
    page = console.page
    go(page, "requests")
    hostile = {
        "sellToken": "<script>window.__pwned = 1</script>",
        "buyToken": '<img src=x onerror="window.__pwned = 2">',
    }
    request = urllib.request.Request(
        sim.base_url + "/v2/rfq/request",
        data=json.dumps(hostile).encode(),
        headers={"Content-Type": "application/json", "X-Note": "<b onmouseover=alert(1)>hi</b>"},
    )
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=30)
    refused.value.close()  # its socket, else a ResourceWarning whenever it is collected
    assert refused.value.code == 400
    link = page.locator("tr", has_text="/v2/rfq/request").filter(has_text="400").first
    link.get_by_role("link").click()
    body = page.get_by_label("Request body")
    body.wait_for()
    assert "<script>window.__pwned = 1</script>" in body.inner_text()
    assert "<img src=x onerror=" in body.inner_text()
    assert "<b onmouseover=alert(1)>hi</b>" in page.get_by_label("Request headers").inner_text()
    assert page.locator("main script, main img, main b").count() == 0  # nothing became markup
    assert page.evaluate("window.__pwned") is None
    assert "curl" in page.get_by_label("curl command").inner_text()
    unrolled_screenshot(page, shots / "requests.png")


def test_every_view_opens_without_a_script_error_or_a_foreign_request(
    console: Watched, sim: RfqSim, shots: Path
) -> None:
    assert sim.info["console_url"] == sim.base_url + "/_sim/console"  # as the banner says
    page = console.page
    firm(sim)
    swap = v1_swap(sim)
    client = Client(sim.base_url)
    ramp = Ramp(client, SimControl(client))
    wallet = fresh_wallet()
    ramp.registered(wallet)
    transfers = Transfers(ramp)
    transfer = transfers.create(transfers.body(wallet, "sell", "500")).transfer["id"]
    for view in ("rfqs", "makers", "webhooks", "venue", "requests"):
        go(page, view)
        page.get_by_role("heading", level=2).first.wait_for()
    for view, shown in (("swaps", swap), ("limit-orders", None), ("transfers", transfer)):
        go(page, view)
        if shown is not None:
            page.locator(f"tr[data-id='{shown}']").wait_for()
        page.screenshot(path=str(shots / f"{view}.png"), full_page=True)


def in_token_units(sim: RfqSim, token: str, atomic: str) -> str:
    """An atomic amount as the page writes it: whole tokens, at most six decimals (cut), and
    the token's symbol."""
    (known,) = [t for t in sim.chain(CHAIN)["tokens"] if t["address"] == token]
    whole, fraction = divmod(int(atomic), 10 ** known["decimals"])
    decimals = f"{fraction:0{known['decimals']}d}"[:6].rstrip("0")
    return f"{whole}{'.' + decimals if decimals else ''} {known['symbol']}"


def number(value: float) -> str:
    """A number as JavaScript writes it (4.0 is 4)."""
    return str(int(value)) if value == int(value) else repr(value)


def test_who_quoted_what_names_each_quotes_amounts_rate_and_distance_from_the_winner(
    console: Watched, sim: RfqSim
) -> None:
    page = console.page
    sim.set_maker("delta", behaviour="decline")  # three quotes and a decline, every time
    quote = firm(sim)
    timeline = sim.call("GET", f"/_sim/rfqs/{quote['rfqId']}")
    summary = timeline["summary"]
    (selected,) = [s for s in timeline["steps"] if s["kind"] == "selected"]
    (winner,) = selected["winners"]
    behind = {loser["name"]: loser["vs_winner_bps"] for loser in selected["losers"]}
    assert behind["delta"] is None
    assert [name for name, bps in behind.items() if bps is not None] != []
    go(page, f"rfqs/{quote['rfqId']}")
    table = page.get_by_role("table", name="quotes")
    table.locator("tr[data-maker='delta']").wait_for()
    expect(table.locator("thead")).to_contain_text("rate USDT/USDC")  # buy per sell
    for step in [s for s in timeline["steps"] if s["kind"] == "answered"]:
        row = table.locator(f"tr[data-maker='{step['maker_name']}']")
        if step["outcome"] != "quoted":
            assert row.locator("td.buy").inner_text() == "—"
            continue
        buy = row.locator("td.buy span.amount")
        assert buy.inner_text() == in_token_units(sim, summary["buy_token"], step["buy_amount"])
        assert buy.get_attribute("title") == f"{step['buy_amount']} (atomic units)"
        sell = row.locator("td.sell > span.amount")
        assert sell.inner_text() == in_token_units(sim, summary["sell_token"], step["sell_amount"])
        fee = in_token_units(sim, summary["sell_token"], step["fee_amount"])
        assert row.locator("td.sell .fee").inner_text() == f"fee {fee}"
        rate = row.locator("td.rate span.rate")
        assert re.fullmatch(r"\d+\.\d+", rate.inner_text())
        assert (rate.get_attribute("title") or "").startswith(f"{step['rate_ray']} (RAY")
        against = row.locator("td.against").inner_text()
        if step["maker_name"] == winner["name"]:
            assert against == "winner"
        else:  # the winner's rate against its own, and how far below it it was
            bps = number(behind[step["maker_name"]])
            assert f"worse_price: {bps} bps below {winner['name']}'s" in against, against
    assert "declined" in table.locator("tr[data-maker='delta'] td.against").inner_text()


def test_a_filled_rfqs_header_shows_both_amounts_in_token_units(
    console: Watched, sim: RfqSim
) -> None:
    page = console.page
    quote = firm(sim)
    go(page, f"rfqs/{quote['rfqId']}")
    detail = page.locator("aside.detail")
    detail.locator("h3 .status", has_text="quoted").wait_for()
    chain = Chain(sim.rpc_urls[CHAIN], CHAIN)
    taker = Wallet(sim.demo_wallets[0]["address"], sim.demo_wallets[0]["private_key"])
    for name in ("approval", "swap"):
        tx = quote["transactions"][name]
        chain.transact(taker, tx["to"], bytes.fromhex(tx["data"][2:]))
    detail.locator("h3 .status", has_text="filled").wait_for()  # live, without a reload
    summary = sim.call("GET", f"/_sim/rfqs/{quote['rfqId']}")["summary"]
    assert summary["buy_amount"] is not None
    for fact, token in (("sell_amount", "sell_token"), ("buy_amount", "buy_token")):
        shown = detail.locator(f"dd[data-fact='{fact}'] span.amount")
        assert shown.inner_text() == in_token_units(sim, summary[token], summary[fact])
        assert shown.get_attribute("title") == f"{summary[fact]} (atomic units)"
    assert detail.locator("dd[data-fact='sell_amount']").inner_text() == "10 USDC"
    assert detail.locator("dd[data-fact='buy_token']").inner_text() == "USDT"
    what = page.locator(f"tr[data-id='{quote['rfqId']}'] td.what").inner_text()
    assert re.fullmatch(r"10 USDC → \d+(\.\d+)? USDT", what), what


def test_a_request_far_down_the_journal_opens_in_view_and_its_url_opens_it_again(
    console: Watched, sim: RfqSim
) -> None:
    page = console.page
    for _ in range(40):
        sim.call("GET", "/_sim/clock")
    go(page, "requests")
    rows = page.get_by_role("table", name="requests list").locator("tbody tr")
    rows.nth(39).wait_for()
    row = rows.nth(30)
    seq = row.get_attribute("data-seq")
    row.get_by_role("link").click()  # scrolled to it first: far below the top of the page
    heading = page.locator("aside.detail h3")
    heading.wait_for()
    assert page.evaluate("window.scrollY") > 0
    expect(heading).to_be_in_viewport()
    assert page.url.endswith(f"#/requests/{seq}")
    opened = heading.inner_text()
    assert opened.startswith("GET /_sim/clock → 200 · ")
    page.reload(wait_until="domcontentloaded")
    page.locator("body[data-ready=true]").wait_for()
    expect(page.locator("aside.detail h3")).to_have_text(opened)
    expect(page.locator("aside.detail h3")).to_be_in_viewport()
    page.get_by_role("link", name="Close").click()
    expect(page.locator("aside.detail")).to_be_hidden()
    assert page.url.endswith("#/requests")


def test_a_link_to_a_request_older_than_the_page_shows_opens_it(
    console: Watched, sim: RfqSim
) -> None:
    """The list shows the newest 500 requests; a link to one before them (shared, bookmarked)
    still opens its detail, read by its number (GET /_sim/requests?seq=N)."""
    page = console.page
    sim.call("GET", "/_sim/clock?mark=old")
    (old,) = sim.call("GET", "/_sim/requests", query={"path": "/_sim/clock", "limit": 1})[
        "requests"
    ]
    for _ in range(510):  # pushes it off the page's 500 rows
        sim.call("GET", "/v2/health")
    go(page, "requests")
    rows = page.get_by_role("table", name="requests list").locator("tbody tr")
    rows.nth(499).wait_for()
    assert page.locator(f"tbody tr[data-seq='{old['seq']}']").count() == 0, "not on the page"
    page.goto(page.url.split("#", 1)[0] + f"#/requests/{old['seq']}")
    heading = page.locator("aside.detail h3")
    expect(heading).to_have_text(f"GET /_sim/clock → 200 · {old['request_id']}")
    expect(page.locator("aside.detail pre.curl")).to_contain_text("mark=old")


def test_the_service_clock_ticks_without_a_reload(console: Watched, sim: RfqSim) -> None:
    page = console.page
    go(page, "venue")
    clock = page.locator("p.clock-now")
    expect(clock).to_have_text(re.compile(r"^now \d{4}-\d\d-\d\d \d\d:\d\d:\d\d "))
    first = clock.inner_text()
    page.wait_for_function(
        "first => document.querySelector('p.clock-now').textContent !== first", arg=first
    )
    second = clock.inner_text()
    assert second[4:23] > first[4:23], (first, second)  # later, by the simulator's clock
    sim.advance_clock(3600)
    expect(clock).to_contain_text("ahead of real time by 3600 s")


def test_each_maker_is_one_row_listing_its_keys(console: Watched, sim: RfqSim) -> None:
    page = console.page
    online = sim.call("GET", "/_sim/makers")["online"]
    keys: dict[str, set[str]] = {}
    for connection in online:
        keys.setdefault(connection["name"], set()).add(
            f"{connection['maker_id']} ({connection['environment']})"
        )
    assert all(len(listed) == 2 for listed in keys.values()), keys  # a live and a test key
    go(page, "makers")
    rows = page.get_by_role("table", name="makers online").locator("tbody tr")
    rows.locator("ul.keys li").first.wait_for()
    assert sorted(rows.evaluate_all("rows => rows.map(r => r.dataset.maker)")) == sorted(keys)
    for name, listed in keys.items():
        shown = rows.and_(page.locator(f"[data-maker='{name}']")).locator("ul.keys li")
        assert set(shown.all_inner_texts()) == listed


BARE_HEADINGS = """() => [...document.querySelectorAll("main h2, main h3, main h4")]
  .filter((heading) => {
    let next = heading.nextElementSibling;
    while (next && (next.hidden || next.getAttribute("role") === "status")) {
      next = next.nextElementSibling;
    }
    if (!next) return true;
    const copy = next.cloneNode(true);
    copy.querySelectorAll("thead, caption, [hidden]").forEach((n) => n.remove());
    return copy.textContent.trim() === "" && !copy.querySelector("svg, input, select, button");
  })
  .map((heading) => heading.textContent)"""


def test_no_view_shows_a_bare_heading_or_an_empty_table(console: Watched, sim: RfqSim) -> None:
    page = console.page
    quote = firm(sim)
    sim.call("GET", "/_sim/clock")
    (request,) = sim.call("GET", "/_sim/requests", query={"limit": 1})["requests"]
    for view in (*VIEWS, f"rfqs/{quote['rfqId']}", f"requests/{request['seq']}"):
        go(page, view)
        page.get_by_role("heading", level=2).first.wait_for()
        if "/" in view:
            page.locator("aside.detail h3, aside.detail p").first.wait_for()
        assert page.evaluate(BARE_HEADINGS) == [], view
        empty_tables = page.evaluate(
            "() => [...document.querySelectorAll('main table')]"
            ".filter(t => t.offsetParent !== null && t.tBodies[0]"
            " && t.tBodies[0].rows.length === 0).map(t => t.getAttribute('aria-label'))"
        )
        assert empty_tables == [], view
    go(page, "swaps")
    page.get_by_text("No v1 swaps yet.").wait_for()
    go(page, "webhooks")
    page.get_by_text("No webhook endpoint registered").wait_for()
    page.get_by_text("No webhook delivery yet.").wait_for()


def test_a_v1_swap_shows_what_it_sold_and_bought_in_token_units(
    console: Watched, sim: RfqSim
) -> None:
    page = console.page
    swap = v1_swap(sim)
    summary = sim.call("GET", f"/_sim/swaps/{swap}")["summary"]
    go(page, "swaps")
    what = page.locator(f"tr[data-id='{swap}'] td.what")
    what.wait_for()
    sold = in_token_units(sim, summary["sell_token"], summary["sold_amount"])
    bought = in_token_units(sim, summary["buy_token"], summary["buy_amount"])
    assert sold.endswith(" USDC")
    assert bought.endswith(" NGNS")
    assert what.inner_text() == f"{sold} → {bought}"
    titles = what.locator("span.amount").evaluate_all("spans => spans.map(s => s.title)")
    assert titles == [
        f"{summary['sold_amount']} (atomic units)",
        f"{summary['buy_amount']} (atomic units)",
    ]
    page.get_by_role("link", name=swap).click()
    detail = page.locator("aside.detail")
    expect(detail.locator("dd[data-fact='sold_amount']")).to_have_text(sold)
    expect(detail.locator("dd[data-fact='buy_amount']")).to_have_text(bought)
    expect(detail.locator("tr.k-built")).to_contain_text(f"sold: {sold}")


def v1_swap(sim: RfqSim) -> str:
    """A v1 swap over the fleet's resting orders, once they rest (it polls the public book)."""
    query = {
        "chainId": CHAIN,
        "sellToken": sim.token(CHAIN, "USDC"),
        "buyToken": sim.token(CHAIN, "NGNS"),
    }
    client = Client(
        sim.base_url, headers={"Authorization": f"Bearer {sim.demo_keys['taker-test']}"}
    )
    deadline = time.monotonic() + 30
    while True:
        offers = client.get("/v1/order-book", params=query).json()["data"]["offers"]
        if offers or time.monotonic() > deadline:
            assert offers, "no resting orders from the fleet within 30 s"
            break
        time.sleep(1)  # the key's 60 requests a minute are shared with the test
    body = {**query, "sellAmount": str(1000 * 10**6), "taker": sim.demo_wallets[1]["address"]}
    created = client.post("/v1/swaps", json=body)
    assert created.status == 201, created.raw
    return str(created.json()["data"]["id"])
