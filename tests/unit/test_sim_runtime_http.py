"""GET /_sim/runtime over HTTP: the process's memory and the collector's pauses in the shape
its OpenAPI document declares; `since` narrows the per-second list; a bad `since` is the error
envelope. The simulator's schedule of full collections: CPython's own off while the app runs
(and back after it), one full collection after requests and an idle spell."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from simulator.adapters.store.history_db import HistoryDb
from simulator.api.http.appkeys import HISTORY
from simulator.api.sim.runtime import RuntimeView
from simulator.runtime.app import create_app
from simulator.runtime.full_collections import NEVER
from simulator.settings import load_settings

Client = TestClient[web.Request, web.Application]


async def started(overrides: dict[str, Any]) -> TestClient[web.Request, web.Application]:
    app = create_app(load_settings(overrides={"seed": 3, **overrides}), start_chains=False)
    return TestClient(TestServer(app, host="127.0.0.1"))


@pytest.fixture
async def client() -> AsyncIterator[Client]:
    async with await started({}) as test_client:
        yield test_client


async def test_runtime_reports_a_full_collection_in_its_declared_shape(client: Client) -> None:
    before = RuntimeView.model_validate((await (await client.get("/_sim/runtime")).json())["data"])
    history = client.app[HISTORY]
    assert isinstance(history, HistoryDb)
    # What start-up queued (the durable configuration's rows) committed: the writer's barrier,
    # not a pause, since a loaded machine commits it later
    await asyncio.to_thread(history.flush)
    queued_at_flush = history.queued
    gc.collect()
    resp = await client.get("/_sim/runtime")
    assert resp.status == 200
    payload = (await resp.json())["data"]
    view = RuntimeView.model_validate(payload)
    assert set(payload) == {"pid", "rss_bytes", "gc", "store"}
    assert view.gc.full_collections.schedule == "when_idle"
    assert view.store.rfqs_in_memory == 0  # no RFQ yet (the file: test_retention.py)
    assert view.store.writer_pid not in (None, view.pid)  # started by the baseline's backup
    # only a write queued since the flush can still wait (a durable tick, the journal's rows)
    assert 0 <= view.store.writes_waiting <= history.queued - queued_at_flush
    assert view.rss_bytes > 10 * 2**20
    assert [g.generation for g in view.gc.generations] == [0, 1, 2]
    assert view.gc.generations[2].collections > before.gc.generations[2].collections
    assert view.gc.pause_longest_ms > 0
    assert view.gc.seconds
    assert view.gc.seconds[-1].collections >= 1
    assert view.gc.seconds_kept == 600

    spec = await (await client.get("/_sim/openapi.json")).json()
    operation = spec["paths"]["/_sim/runtime"]["get"]
    assert operation["operationId"] == "simRuntime"
    assert [p["name"] for p in operation["parameters"]] == ["since"]


async def test_since_narrows_the_seconds_and_a_bad_one_is_refused(client: Client) -> None:
    gc.collect()
    later = (datetime.now(UTC) + timedelta(hours=1)).isoformat().replace("+00:00", "Z")
    resp = await client.get("/_sim/runtime", params={"since": later})
    assert resp.status == 200
    assert (await resp.json())["data"]["gc"]["seconds"] == []
    earlier = (datetime.now(UTC) - timedelta(minutes=1)).isoformat().replace("+00:00", "Z")
    resp = await client.get("/_sim/runtime", params={"since": earlier})
    assert (await resp.json())["data"]["gc"]["seconds"]
    bad = await client.get("/_sim/runtime", params={"since": "yesterday"})
    assert bad.status == 400
    error = (await bad.json())["error"]
    assert error["code"] == "invalid_request"
    assert error["details"]["issues"][0]["field"] == "since"


async def runtime(client: Client) -> RuntimeView:
    return RuntimeView.model_validate((await (await client.get("/_sim/runtime")).json())["data"])


async def test_the_simulator_runs_a_full_collection_after_an_idle_spell() -> None:
    before = gc.get_threshold()
    async with await started({"collector": {"idle_s": 0.2}}) as client:
        view = await runtime(client)
        assert view.gc.thresholds == [before[0], before[1], NEVER]  # CPython's own: off
        # The look that counts this request, then 0.2 s without one: one full collection.
        for _ in range(200):
            if (await runtime(client)).gc.full_collections.when_idle:
                break
            await asyncio.sleep(0.6)  # longer than idle_s: polling is a request too
        view = await runtime(client)
        assert view.gc.full_collections.when_idle >= 1
        assert view.gc.full_collections.memory_grown == 0
        assert view.gc.generations[2].collections >= 1
    assert gc.get_threshold() == before  # the interpreter as the app found it


async def test_with_the_interpreters_schedule_nothing_changes() -> None:
    before = gc.get_threshold()
    async with await started({"collector": {"full_collections": "interpreter"}}) as client:
        view = await runtime(client)
        assert view.gc.thresholds == list(before)
        assert view.gc.full_collections.schedule == "interpreter"
    assert gc.get_threshold() == before
