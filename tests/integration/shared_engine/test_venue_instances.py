"""`rfqsim serve --instances 2`: one address, two processes, one venue. Every request here goes
to the venue's address, over a connection of its own, so the kernel hands it to either
instance; the answers say which served it (`X-Rfqsim-Instance`)."""

from __future__ import annotations

import json
import os
import signal
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from rfqsim.pytest_plugin import RfqSim, RfqSimError
from tests.integration.firm_quotes import execute, firm_request
from tests.integration.serve_process import Served, serve, stop
from tests.integration.shared_engine.conftest import require_redis_server

pytestmark = pytest.mark.xdist_group("venue_instances")


@pytest.fixture(scope="module")
def venue(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    require_redis_server()
    with serve(tmp_path_factory.mktemp("venue"), "--instances", "2") as served:
        yield served


def ask(url: str, method: str = "GET", headers: dict[str, str] | None = None) -> tuple[int, str]:
    """The status and the instance that served it."""
    status, served_by, _ = answer_of(url, method, headers)
    return status, served_by


def answer_of(
    url: str, method: str = "GET", headers: dict[str, str] | None = None
) -> tuple[int, str, Any]:
    """The status, the instance that served it and the JSON body."""
    request = urllib.request.Request(url, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            body = json.loads(response.read())
            return int(response.status), str(response.headers["X-Rfqsim-Instance"]), body
    except urllib.error.HTTPError as answered:
        body = json.loads(answered.read())
        return int(answered.code), str(answered.headers["X-Rfqsim-Instance"]), body


def test_the_ready_file_names_the_venue_and_both_instances(venue: Served) -> None:
    instances = venue.info["instances"]
    assert [i["id"] for i in instances] == [0, 1]
    assert instances[0]["pid"] == venue.process.pid
    assert instances[1]["pid"] != venue.process.pid
    os.kill(instances[1]["pid"], 0)  # alive
    # each listens on a loopback port of its own too, where the other sends what it serves
    assert venue.api_url not in {i["api_url"] for i in instances}
    assert RfqSim(venue.api_url, venue.info).call("GET", "/_sim/info")["instances"] == instances


def test_the_address_reaches_both_instances(venue: Served) -> None:
    """Health answers where it lands: over enough connections, each instance answers some."""
    seen: set[str] = set()
    with ThreadPoolExecutor(max_workers=8) as pool:
        for _ in range(50):  # up to 400 requests; both are seen within the first few dozen
            seen |= {who for _, who in pool.map(ask, [f"{venue.api_url}/v2/health"] * 8)}
            if seen == {"0", "1"}:
                break
    assert seen == {"0", "1"}


def test_every_rfq_is_read_and_cancelled_through_the_address(venue: Served) -> None:
    """Firm quotes made at either instance; each GET and cancel through the address is served
    by the instance that made the RFQ, whichever one the connection reached."""
    sim = RfqSim(venue.api_url, venue.info)
    key = sim.demo_keys["taker-test"]
    made: dict[str, str] = {}  # rfq id -> claim token
    with ThreadPoolExecutor(max_workers=4) as pool:
        answers = list(pool.map(lambda n: firm_request(sim, n % 3), range(4)))
    for status, body in answers:
        assert status == 200, body
        assert body["data"]["status"] == "quoted", body
        made[body["data"]["rfqId"]] = body["data"]["claimToken"]
    owners = {}
    for rfq_id in made:
        servers = {ask(f"{venue.api_url}/v2/rfq/{rfq_id}", headers=_key(key)) for _ in range(6)}
        assert len(servers) == 1, servers  # one owner, however the connection went
        ((status, owner),) = servers
        assert status == 200
        owners[rfq_id] = owner
    for rfq_id, owner in owners.items():
        cancelled = ask(f"{venue.api_url}/v2/rfq/{rfq_id}/cancel", "POST", _key(key))
        assert cancelled == (200, owner)


def _key(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def test_the_venue_stops_whole_on_sigterm(tmp_path: Path) -> None:
    """A venue of its own: SIGTERM to the first instance stops the other and itself."""
    require_redis_server()
    with serve(tmp_path, "--instances", "2") as served:
        other = served.info["instances"][1]["pid"]
        assert stop(served.process) == 0
        deadline = time.monotonic() + 10
        while _alive(other):
            assert time.monotonic() < deadline, "the other instance outlived the first"
            time.sleep(0.05)
        assert not (tmp_path / "ready.json").exists()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def quoted_at_the_second(served: Served, taker: int) -> tuple[RfqSim, int, dict[str, Any]]:
    """A firm quote made at the venue's second instance, by its own port: the venue as a
    client, the second's pid and the quote's data."""
    second = RfqSim(served.info["instances"][1]["api_url"], served.info)
    status, made = firm_request(second, taker)
    assert (status, made["data"]["status"]) == (200, "quoted"), made
    sim = RfqSim(served.api_url, served.info)
    return sim, served.info["instances"][1]["pid"], dict(made["data"])


def test_killing_the_other_instance_leaves_the_first_answering(tmp_path: Path) -> None:
    """SIGKILL to the second instance while firm requests run: the address keeps answering
    (every new connection reaches the first), the first sees the exit and lists one instance
    at once, and an RFQ the dead one held is read and cancelled through the address, the
    first taking it over from its last copy."""
    require_redis_server()
    with serve(tmp_path, "--instances", "2") as served:
        sim, other, made = quoted_at_the_second(served, 2)
        rfq = f"{served.api_url}/v2/rfq/{made['rfqId']}"
        key = _key(sim.demo_keys["taker-test"])
        status, served_by, held = answer_of(rfq, headers=key)
        assert (status, served_by) == (200, "1"), held

        def attempt(taker: int) -> object:
            try:
                return firm_request(sim, taker)[0]
            except OSError as lost:  # a connection the dead instance held: reset
                return type(lost).__name__

        with ThreadPoolExecutor(max_workers=2) as pool:
            running = pool.map(attempt, [0, 1, 2, 0])
            os.kill(other, signal.SIGKILL)
            assert len(list(running)) == 4  # answered, refused or reset, each: nothing hangs
        deadline = time.monotonic() + 10
        while _alive(other):  # until the first reaps it: it has seen the exit by then
            assert time.monotonic() < deadline, "the dead instance was not reaped"
            time.sleep(0.05)
        # Off the venue's list at once, not when its lease ends: no 503 for what it held.
        assert [i["id"] for i in sim.call("GET", "/_sim/info")["instances"]] == [0]
        assert answer_of(rfq, headers=key) == (200, "0", held)  # taken over, as it was
        cancelled = answer_of(f"{rfq}/cancel", "POST", key)
        assert cancelled == (
            200,
            "0",
            {"data": {"rfqId": held["data"]["rfqId"], "status": "released"}},
        )
        for taker in range(3):  # another key: the first one's slots may be in use
            status, body = firm_request(sim, taker, chain=56, key="taker-live")
            assert status == 200, body
        assert {ask(f"{served.api_url}/v2/health")[1] for _ in range(20)} == {"0"}
        assert stop(served.process) == 0


def test_a_dead_instance_s_live_rfq_is_taken_over_and_settled_unasked(tmp_path: Path) -> None:
    """SIGKILL to the second instance holding a quote, which its taker then fills on chain:
    with no request for that RFQ, the first instance takes it over once the second is gone,
    reads back the fill it could not match while nobody held the record, and settles it (the
    venue's list shows it filled); the RFQ then reads filled, served by the first."""
    require_redis_server()
    with serve(tmp_path, "--instances", "2") as served:
        sim, other, made = quoted_at_the_second(served, 1)
        rfq_id = made["rfqId"]
        os.kill(other, signal.SIGKILL)
        execute(sim, made, taker=1)  # mined while the second is gone

        def status_listed() -> str | None:
            """The RFQ's status in the venue's list (503 while the dead instance is still in
            the venue's list: its part cannot be read)."""
            try:
                items = sim.call("GET", "/_sim/rfqs")["items"]
            except RfqSimError as unavailable:
                if unavailable.status != 503:
                    raise
                return None
            return next((i["status"] for i in items if i["id"] == rfq_id), None)

        deadline = time.monotonic() + 30  # the exit seen, then a round (every second)
        while status_listed() != "filled":
            assert time.monotonic() < deadline, f"not settled: {status_listed()}"
            time.sleep(0.2)
        key = _key(sim.demo_keys["taker-test"])
        status, served_by, body = answer_of(f"{served.api_url}/v2/rfq/{rfq_id}", headers=key)
        assert (status, served_by, body["data"]["status"]) == (200, "0", "filled"), body
        assert stop(served.process) == 0


def test_a_venue_without_the_control_api_starts_and_answers_from_both(tmp_path: Path) -> None:
    """`--no-control-api --instances 2`: the ready files say only what an operator hands a QA
    team, and the venue still starts whole."""
    require_redis_server()
    with serve(tmp_path, "--instances", "2", "--no-control-api") as served:
        assert "instances" not in served.info  # the operator's inputs only
        seen: set[str] = set()
        with ThreadPoolExecutor(max_workers=8) as pool:
            for _ in range(50):
                seen |= {who for _, who in pool.map(ask, [f"{served.api_url}/v2/health"] * 8)}
                if seen == {"0", "1"}:
                    break
        assert seen == {"0", "1"}
        assert ask(f"{served.api_url}/_sim/info")[0] == 404
        assert stop(served.process) == 0
