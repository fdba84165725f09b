"""The request journal looks back beyond its ring (real `rfqsim serve`, real HTTP): with a ring
of 5 requests, every request of the run is still found by its id and listed, page after page,
by cursor, read from the history file; a restart on the same `--state-dir` still finds them,
and numbering goes on after them."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from conformance.deployment.sim_control import SimControl
from conformance.wire.client import Client
from rfqsim.pytest_plugin import RfqSim
from tests.integration.serve_process import serve, stop

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("state-dir")]

RING = 5
ASKED = 23
PATH = "/v2/rfq/levels"


def tiny_ring_env() -> dict[str, str]:
    return {**os.environ, "RFQSIM_JOURNAL__REQUESTS_KEPT": str(RING)}


def made_requests(api_url: str) -> list[str]:
    """ASKED requests for the public levels, oldest first."""
    caller = Client(api_url)
    ids = []
    for _ in range(ASKED):
        response = caller.get(PATH, params={"chainId": "97"})
        assert response.status == 200, response.raw
        assert response.request_id is not None
        ids.append(response.request_id)
    return ids


def listed(api_url: str, **query: Any) -> dict[str, Any]:
    response = Client(api_url).get("/_sim/requests", params={"summary": "true", **query})
    assert response.status == 200, response.raw
    return dict(response.json()["data"])


def all_pages(api_url: str, limit: int) -> tuple[list[str], int]:
    ids: list[str] = []
    pages = 0
    cursor: str | None = None
    while True:
        query: dict[str, Any] = {"path": PATH, "limit": str(limit)}
        if cursor is not None:
            query["cursor"] = cursor
        page = listed(api_url, **query)
        pages += 1
        ids += [e["request_id"] for e in page["requests"]]
        cursor = page.get("next_cursor")
        if cursor is None:
            return ids, pages


def test_every_request_is_found_and_paged_beyond_a_tiny_ring(tmp_path: Path) -> None:
    with serve(tmp_path, "--no-makers", env=tiny_ring_env()) as served:
        ids = made_requests(served.api_url)
        first = listed(served.api_url, request_id=ids[0])
        assert first["capacity"] == RING
        [oldest] = first["requests"]
        assert (oldest["request_id"], oldest["path"], oldest["status"]) == (ids[0], PATH, 200)
        newest = listed(served.api_url, path=PATH, limit="3")
        assert [e["request_id"] for e in newest["requests"]] == ids[::-1][:3]
        paged, pages = all_pages(served.api_url, limit=7)
        assert paged == ids[::-1]  # newest first, none twice, none missing
        assert pages == 4  # 7 + 7 + 7 + 2
        bad = Client(served.api_url).get("/_sim/requests", params={"cursor": "not-ours"})
        assert bad.status == 400, bad.raw
        assert bad.json()["error"]["details"]["field"] == "cursor"
        assert stop(served.process) == 0


def test_a_restart_on_the_state_dir_still_finds_an_old_request(tmp_path: Path) -> None:
    state_dir = tmp_path / "state"
    args = ("--no-makers", "--state-dir", str(state_dir))
    with serve(tmp_path, *args, env=tiny_ring_env()) as first:
        ids = made_requests(first.api_url)
        [before] = listed(first.api_url, request_id=ids[0])["requests"]
        assert stop(first.process) == 0

    with serve(tmp_path, *args, env=tiny_ring_env()) as second:
        [found] = listed(second.api_url, request_id=ids[0])["requests"]
        assert found == before
        [last] = listed(second.api_url, request_id=ids[-1])["requests"]
        made = Client(second.api_url).get(PATH, params={"chainId": "97"})
        [after] = listed(second.api_url, request_id=made.request_id)["requests"]
        assert after["seq"] > last["seq"]  # numbering goes on after the kept requests
        assert stop(second.process) == 0


def test_a_snapshot_restore_and_a_reset_forget_the_file_rows_too(tmp_path: Path) -> None:
    """As before the file held them: after a restore (whose file is the snapshot's, with the
    requests made before it) or a reset, a test reads only what it sent since."""
    with serve(tmp_path, "--no-makers", env=tiny_ring_env()) as served:
        sim = RfqSim(served.api_url, served.info)
        before = made_requests(served.api_url)
        sim.snapshot("journal")
        after = made_requests(served.api_url)
        sim.restore("journal")
        for request_id in (before[0], before[-1], after[0], after[-1]):
            assert sim.requests(request_id=request_id) == []
        assert {e["path"] for e in sim.requests()} <= {"/_sim/snapshots/journal/restore"}
        again = made_requests(served.api_url)
        sim.reset()
        assert sim.requests(request_id=again[0]) == []
        assert [e["path"] for e in sim.requests()] == ["/_sim/reset"]
        assert stop(served.process) == 0


def test_requests_older_than_kept_s_are_forgotten_by_the_sweep(tmp_path: Path) -> None:
    env = {**tiny_ring_env(), "RFQSIM_JOURNAL__KEPT_S": "600"}
    with serve(tmp_path, "--no-makers", env=env) as served:
        ids = made_requests(served.api_url)
        SimControl(Client(served.api_url)).advance(300)
        recent = made_requests(served.api_url)
        SimControl(Client(served.api_url)).advance(400)  # the sweep runs at once on an advance
        deadline = time.monotonic() + 30
        while listed(served.api_url, request_id=ids[-1])["requests"]:
            assert time.monotonic() < deadline, "the first requests outlived journal.kept_s"
            time.sleep(0.05)
        assert listed(served.api_url, request_id=ids[0])["requests"] == []
        paged, _ = all_pages(served.api_url, limit=10)
        assert paged == recent[::-1]  # 300 s old: kept, from the ring and the file
        assert stop(served.process) == 0
