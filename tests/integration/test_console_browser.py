"""The console in a real browser (Debian's chromium, driven by Playwright) against a real
`rfqsim serve`: live updates without reload, the fleet's controls, the clock, webhook attempts
and Redeliver, hostile input rendered inert; no request leaves 127.0.0.1 and no script error
happens on any page (checked after every test). Screenshots of every view are taken here too
(docs/console.md shows them: `just screenshots`)."""

from __future__ import annotations

import json
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import BrowserContext, Page

from conformance.client import Client
from conformance.ramp import Ramp, fresh_wallet
from conformance.ramp_transfers import Transfers
from conformance.sim_control import SimControl
from rfqkit.webhook_receiver import WebhookReceiver
from rfqsim.pytest_plugin import RfqSim
from tests.integration.browser import Watched, chromium, chromium_path, screenshot_dir, watch
from tests.integration.makers.test_fleet_process import firm_quote as firm
from tests.integration.serve_process import serve

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("console-browser")]

CHAIN = 97


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
    page.screenshot(path=str(shots / "rfq-timeline.png"), full_page=True)


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
    page.screenshot(path=str(shots / "requests.png"), full_page=True)


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
