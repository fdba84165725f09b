"""The console in Firefox (Debian's firefox-esr over WebDriver BiDi) against a real `rfqsim
serve`: the same page the chromium tests drive (test_console_browser.py) loads, updates live
over server-sent events, opens every view and moves the clock from its form, with no script
error and no request leaving 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator

import pytest

from rfqsim.pytest_plugin import RfqSim
from tests.integration.firefox import Page, firefox, firefox_path
from tests.integration.firm_quotes import firm_quote as firm
from tests.integration.serve_process import serve

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("console-firefox")]

VIEWS = ("rfqs", "makers", "webhooks", "venue", "requests", "swaps", "limit-orders", "transfers")


@pytest.fixture(scope="module")
def sim(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RfqSim]:
    firefox_path()  # skip (or fail in CI) before starting anything
    with serve(tmp_path_factory.mktemp("console-firefox")) as served:
        yield RfqSim(served.api_url, served.info)


@pytest.fixture
async def page(sim: RfqSim, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Page]:
    """The console open in a fresh Firefox on a fresh simulator; afterwards: no script error,
    nothing requested outside the simulator."""
    await asyncio.to_thread(sim.reset)
    async with firefox(tmp_path_factory.mktemp("firefox-profile")) as opened:
        assert await opened.goto(sim.base_url + "/") == sim.base_url + "/_sim/console"
        await opened.wait_until("document.body.dataset.ready === 'true'", "the console ready")
        yield opened
        opened.check(sim.base_url)


async def go(page: Page, view: str) -> None:
    await page.evaluate(f"window.location.hash = {json.dumps('#/' + view)}")
    shown = json.dumps(view.split("/")[0])
    await page.wait_until(f"document.body.dataset.view === {shown}", f"the {view} view")


def status_of(rfq_id: str) -> str:
    """A script reading the RFQ's status cell in the list ('' while it is not listed)."""
    cell = json.dumps(f"tr[data-id='{rfq_id}'] td.status")
    return f"document.querySelector({cell})?.textContent ?? ''"


async def test_a_firm_quote_arrives_live_and_its_timeline_names_every_maker(
    page: Page, sim: RfqSim
) -> None:
    await go(page, "rfqs")
    quote = await asyncio.to_thread(firm, sim)  # made outside the page: over the live stream
    rfq_id = quote["rfqId"]
    await page.wait_until(f"{status_of(rfq_id)}.includes('quoted')", f"{rfq_id} listed quoted")
    await go(page, f"rfqs/{rfq_id}")
    makers = await page.wait_until(
        "(() => { const li = [...document.querySelectorAll('ul.answers li')];"
        " return li.length === 4 && li.map(i => i.dataset.maker + ' ' + i.textContent); })()",
        "four answers",
    )
    assert sorted(m.split(" ", 1)[0] for m in makers) == ["alpha", "bravo", "charlie", "delta"]
    assert all(" ms" in m for m in makers), makers  # each with its reply time
    assert await page.evaluate("document.querySelectorAll('ul.answers li .winner').length") == 1


async def test_every_view_opens_and_advance_clock_expires_a_live_quote(
    page: Page, sim: RfqSim
) -> None:
    quote = await asyncio.to_thread(firm, sim)
    rfq_id = quote["rfqId"]
    for view in VIEWS:
        await go(page, view)
        await page.wait_until("document.querySelector('main h2, h2') !== null", f"{view} heading")
    await go(page, "venue")
    await page.evaluate(
        "(() => { const label = [...document.querySelectorAll('label')]"
        ".find(l => l.textContent === 'seconds');"
        " document.getElementById(label.htmlFor).value = '120';"
        " [...document.querySelectorAll('button')]"
        ".find(b => b.textContent === 'Advance clock').click(); })()"
    )
    await page.wait_until(
        "[...document.querySelectorAll('[role=status]')]"
        ".some(e => e.textContent.includes('clock advanced'))",
        "the clock advanced",
    )
    await go(page, "rfqs")
    await page.wait_until(f"{status_of(rfq_id)}.includes('expired')", f"{rfq_id} listed expired")
