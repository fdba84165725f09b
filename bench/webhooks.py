"""Webhook delivery benchmark: the real delivery engine (outbox, worker, HMAC signing, the HTTPS
sender trusting the local CA) against an HTTPS receiver running in its own process."""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench.load import percentile
from bench.processes import REPO
from bench.report import Section
from simulator.adapters.store.delivery_archive import SqliteDeliveryArchive
from simulator.adapters.store.history_db import HistoryDb
from simulator.clock import Clock
from simulator.randomness import RandomSource
from simulator.runtime.webhooks import build_webhooks, webhook_adapters
from simulator.services.shared.events import Event
from simulator.settings import WebhookSettings


def _event(index: int) -> Event:
    rfq_id = f"rfq_bench{index:08d}"
    body = {
        "id": f"rfq.filled:{rfq_id}",
        "type": "rfq.filled",
        "created": "2026-01-01T00:00:00.000Z",
        "data": {"apiVersion": 2, "rfq": {"id": rfq_id, "chainId": 97, "late": False}},
    }
    return Event(
        id=str(body["id"]), type="rfq.filled", created=0.0, partner_id="ptn_bench", body=body
    )


async def _run(state_dir: Path, paced: int, rate: float, burst: int) -> tuple[list[float], float]:
    settings = WebhookSettings(state_dir=str(state_dir))
    clock = Clock()
    adapters = webhook_adapters(settings)
    history = HistoryDb(state_dir / "history.sqlite3")  # finished deliveries go there
    webhooks = build_webhooks(
        settings,
        clock,
        RandomSource(1),
        transport=adapters.sender,
        certificates=adapters.ca,
        archive=SqliteDeliveryArchive(history),
    )
    issued = await adapters.ca.issue(["127.0.0.1"])
    cert, key, port_file = state_dir / "cert.pem", state_dir / "key.pem", state_dir / "port"
    cert.write_bytes(issued.cert_pem)
    key.write_bytes(issued.key_pem)
    receiver = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bench.webhook_receiver",
        str(cert),
        str(key),
        str(port_file),
        cwd=REPO,
    )
    worker = asyncio.create_task(webhooks.worker.run())
    try:
        while not port_file.exists() or not port_file.read_text():  # noqa: ASYNC110 - another process writes it
            await asyncio.sleep(0.02)
        url = f"https://127.0.0.1:{port_file.read_text()}/hook"
        webhooks.registry.create("ptn_bench", url, ["rfq.filled"])
        published: dict[str, float] = {}

        async def wait_all(count: int) -> None:
            while len(webhooks.outbox.find(status="delivered")) < count:  # noqa: ASYNC110 - polls the outbox the worker fills
                await asyncio.sleep(0.005)

        # Latency: a steady stream, one event every 1/rate s.
        for index in range(paced):
            event = _event(index)
            published[event.id] = clock.time()
            webhooks.dispatcher.publish(event)
            await asyncio.sleep(1 / rate)
        await wait_all(paced)
        latencies = []
        for delivery in webhooks.outbox.find():
            attempt = delivery.attempts[0]
            assert attempt.latency_ms is not None
            done = attempt.started_at + attempt.latency_ms / 1000
            latencies.append((done - published[delivery.event_id]) * 1000)
        # Throughput: a burst of events published at once, until every one is acknowledged.
        began = time.perf_counter()
        for index in range(paced, paced + burst):
            webhooks.dispatcher.publish(_event(index))
        await wait_all(paced + burst)
        throughput = burst / (time.perf_counter() - began)
        return latencies, throughput
    finally:
        worker.cancel()
        await asyncio.gather(worker, return_exceptions=True)
        await adapters.sender.close()
        history.close()
        receiver.terminate()
        await asyncio.wait_for(receiver.wait(), timeout=10)


def bench_webhooks(paced: int, rate: float, burst: int) -> Section:
    with tempfile.TemporaryDirectory() as tmp:
        latencies, throughput = asyncio.run(_run(Path(tmp), paced, rate, burst))
    section = Section(
        title="Webhook delivery",
        intro=(
            f"The delivery engine (outbox, worker, HMAC-SHA256 signing, HTTPS with the local CA) "
            f"against an HTTPS receiver in its own process answering 204. Latency: {paced} events "
            f"published at {rate:.0f}/s, from publish to the receiver's 2xx. Throughput: a burst "
            f"of {burst} events until every delivery is acknowledged."
        ),
        header=("measure", "value", "target"),
    )
    section.rows += [
        ("median delivery latency", f"{statistics.median(latencies):.1f} ms", "—"),
        ("p99 delivery latency", f"{percentile(latencies, 99):.1f} ms", "≤ 500 ms"),
        ("sustained deliveries per second", f"{throughput:.0f}", "≥ 300"),
    ]
    return section
