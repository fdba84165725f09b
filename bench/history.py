"""A day of history at rest: `GET /v2/rfq/{id}` of an old RFQ and the console's filtered lists
against a history file holding a million RFQs and their timelines.

The file is made the way a day of traffic makes it, but faster: one real RFQ is quoted,
expires and leaves memory through a real `rfqsim serve --state-dir`; its row and its timeline
are then the template for the others, written with the simulator's own adapters (each a copy
under its own id, at rest and created a little earlier than the one before it, spread over the
last 22 hours; a thousand takers). The simulator is then started again on that directory and
read over HTTP."""

from __future__ import annotations

import asyncio
import json
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp

from bench import processes
from bench.load import percentile
from bench.report import Section
from bench.sim_api import firm_body, setup_bench_key
from simulator.adapters.store.history_db import HISTORY_FILE, HistoryDb
from simulator.adapters.store.history_writer import compress_row, expand_row

TITLE = "History at rest: a million RFQs in the history file"
TARGET_MS = 20.0
SPREAD_S = 22 * 3600.0
TAKERS = 1000
BATCH = 5000


async def _one_rfq_at_rest(api: str, info: dict[str, Any]) -> tuple[str, str]:
    """A quote that expires and leaves memory; returns its id and the key that owns it (an
    unlimited one: the reads below are many)."""
    body = firm_body(info)
    async with aiohttp.ClientSession() as plain:
        key = await setup_bench_key(plain, api)
    async with aiohttp.ClientSession(base_url=api) as session:
        headers = {"Authorization": f"Bearer {key}"}
        rfq_ids = []
        for _ in range(2):  # the second pushes the first's timeline out of memory (kept: 1)
            async with session.post("/v2/rfq/request", json=body, headers=headers) as response:
                rfq_ids.append(str((await response.json())["data"]["rfqId"]))
            async with session.post(f"/v2/rfq/{rfq_ids[-1]}/cancel", json={}, headers=headers):
                pass
        rfq_id = rfq_ids[0]
        async with session.post("/_sim/clock/advance", json={"seconds": 120}):
            pass  # it expires
        async with session.post("/_sim/clock/advance", json={"seconds": 120}):
            pass  # at rest for two minutes: the sweep moves it to the file
        deadline = time.monotonic() + 60
        while True:
            async with session.get("/_sim/runtime") as response:
                store = (await response.json())["data"]["store"]
            if store["rfqs_in_memory"] == 0:
                return rfq_id, key
            if time.monotonic() > deadline:
                raise RuntimeError(f"the RFQ never left memory: {store}")
            await asyncio.sleep(0.1)


def _fill(path: Path, template_id: str, rows: int) -> tuple[list[str], list[str], float]:
    """Copies of the template RFQ and its timeline; returns (ids, takers, seconds taken)."""
    started = time.perf_counter()
    db = HistoryDb(path)
    ((record_text, at_rest),) = db.read(
        "SELECT record, at_rest_since FROM rfqs WHERE id = ?", (template_id,)
    )
    timeline_row = db.read(
        "SELECT timeline FROM timelines WHERE topic = 'rfqs' AND id = ?", (template_id,)
    )
    if not timeline_row:
        raise RuntimeError("the template's timeline is not in the file")
    record_template = json.loads(expand_row(record_text))
    timeline_template = json.loads(expand_row(timeline_row[0][0]))
    takers = ["0x" + f"{n:040x}" for n in range(1, TAKERS + 1)]
    ids: list[str] = []
    step = SPREAD_S / rows
    for start in range(0, rows, BATCH):
        rfq_rows, timeline_rows, maker_rows = [], [], []
        for n in range(start, min(rows, start + BATCH)):
            rfq_id = f"rfq_{n:024x}"
            ids.append(rfq_id)
            since = at_rest - (n + 1) * step
            record_template["record"]["rfq_id"] = rfq_id
            rfq_rows.append(
                (rfq_id, since - 60, since, compress_row(json.dumps(record_template).encode()))
            )
            taker = takers[n % TAKERS]
            timeline = timeline_template["timeline"]
            timeline["object_id"] = rfq_id
            timeline["created_at"] = since - 60
            timeline["summary"]["taker"] = taker
            pair = f"{timeline['summary']['sell_token']}/{timeline['summary']['buy_token']}"
            item = [rfq_id, since - 60, timeline["status"], timeline["summary"]]
            timeline_rows.append(
                (
                    "rfqs",
                    rfq_id,
                    since - 60,
                    timeline["status"].lower(),
                    taker,
                    pair.lower(),
                    json.dumps(item),
                    compress_row(json.dumps(timeline_template).encode()),
                )
            )
            for maker in timeline["summary"].get("makers", []):
                maker_rows.append(("rfqs", str(maker).lower(), since - 60, rfq_id))
        db.write_many(
            "INSERT INTO rfqs (id, created_at, at_rest_since, record) VALUES (?, ?, ?, ?)",
            rfq_rows,
        )
        db.write_many(
            "INSERT INTO timelines (topic, id, created_at, status, taker, pair, item, timeline) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            timeline_rows,
        )
        db.write_many(
            "INSERT OR IGNORE INTO timeline_makers (topic, maker, created_at, id) "
            "VALUES (?, ?, ?, ?)",
            maker_rows,
        )
        db.flush()
    db.close()
    return ids, takers, time.perf_counter() - started


async def _latencies(api: str, headers: dict[str, str], paths: list[str]) -> list[float]:
    found: list[float] = []
    async with aiohttp.ClientSession(base_url=api, headers=headers) as session:
        for path in paths:
            started = time.perf_counter()
            async with session.get(path) as response:
                await response.read()
                if response.status != 200:
                    raise RuntimeError(f"GET {path}: {response.status}")
            found.append((time.perf_counter() - started) * 1000)
    return found


def bench_history(rows: int, reads: int) -> Section:
    seed = random.Random(7)
    with tempfile.TemporaryDirectory() as tmp:
        state_dir = Path(tmp) / "state"
        args = ("--state-dir", str(state_dir), "--seed", "0", "--no-makers")
        kept_one = {"RFQSIM_TIMELINES__KEPT": "1"}
        with processes.simulator(*args[:4], env=kept_one) as first:
            template, key = asyncio.run(_one_rfq_at_rest(first.info["api_url"], first.info))
        ids, takers, fill_s = _fill(state_dir / HISTORY_FILE, template, rows)
        size_mb = sum(p.stat().st_size for p in state_dir.glob(HISTORY_FILE + "*")) / 2**20
        with processes.simulator(*args, timeout=300) as second:
            api = second.info["api_url"]
            headers = {"Authorization": f"Bearer {key}"}  # kept by the state directory
            old = [f"/v2/rfq/{seed.choice(ids[rows // 2 :])}" for _ in range(reads)]
            by_taker = [f"/_sim/rfqs?taker={seed.choice(takers)}&limit=50" for _ in range(reads)]
            by_status = ["/_sim/rfqs?status=expired&limit=50" for _ in range(reads)]
            asyncio.run(_latencies(api, headers, old[:20]))  # connections and caches warm
            measured = {
                "GET /v2/rfq/{id} of an RFQ 11-22 h old": asyncio.run(
                    _latencies(api, headers, old)
                ),
                "GET /_sim/rfqs?taker=…&limit=50 (1,000 takers)": asyncio.run(
                    _latencies(api, headers, by_taker)
                ),
                "GET /_sim/rfqs?status=expired&limit=50": asyncio.run(
                    _latencies(api, headers, by_status)
                ),
            }
            ready_s = second.seconds_to_ready
    section = Section(
        title=TITLE,
        intro=(
            f"{rows:,} RFQ records and their timelines at rest in the state directory's history "
            f"file ({size_mb:.0f} MB; written in {fill_s:.0f} s by the simulator's own schema "
            "from a real RFQ that expired and left memory), then `rfqsim serve --state-dir` "
            f"started on it (ready in {ready_s:.1f} s) and read over HTTP, one request at a "
            f"time, {reads} each. Target: each ≤ {TARGET_MS:.0f} ms."
        ),
        header=("read", "p50 ms", "p99 ms", "max ms", "met"),
    )
    for name, values in measured.items():
        p99 = percentile(values, 99)
        section.rows.append(
            (
                name,
                f"{statistics.median(values):.2f}",
                f"{p99:.2f}",
                f"{max(values):.2f}",
                "yes" if p99 <= TARGET_MS else "no",
            )
        )
    return section
