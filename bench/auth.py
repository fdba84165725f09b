"""The cost of the auth layer: in process, each step timed on its own (an API key with its
limiter and scope, a proof-of-control grant lookup, a fresh EOA proof verified), and over HTTP
the latency an API key or a claim token adds to the same endpoint compared with the no-auth
``/v2/health`` baseline in the same simulator."""

from __future__ import annotations

import asyncio
import os
import statistics
import time
from typing import Any

import aiohttp
from eth_account import Account

from bench import processes
from bench.load import LoadResult, percentile, run_load
from bench.report import Section
from bench.sim_api import setup_bench_key


async def _auth_http(api: str, seconds: float) -> dict[str, LoadResult]:
    async with aiohttp.ClientSession() as session:
        key = await setup_bench_key(session, api)
    missing = f"{api}/v2/rfq/rfq_000000000000000000000000"
    runs = {
        "GET /v2/health (no auth, no limiter: the baseline)": await run_load(
            f"{api}/v2/health", concurrency=1, seconds=seconds
        ),
        "GET /v2/rfq/{id} with an API key (auth + limiter + scope, then 404)": await run_load(
            missing,
            concurrency=1,
            seconds=seconds,
            headers={"Authorization": f"Bearer {key}"},
            expect_status=404,
        ),
        "GET /v2/rfq/{id} keyless with a claim token (limiter, then 404)": await run_load(
            missing,
            concurrency=1,
            seconds=seconds,
            headers={"X-Rfq-Claim": "rfqc_x"},
            expect_status=404,
        ),
    }
    return runs


def bench_auth_http(seconds: float) -> Section:
    with processes.simulator("--no-makers") as started:
        runs = asyncio.run(_auth_http(started.info["api_url"], seconds))
    baseline = next(iter(runs.values()))
    section = Section(
        title="Auth layer over HTTP",
        intro=(
            f"One connection, back-to-back requests for {seconds:.0f} s each, same simulator; "
            "the added latency is the median minus the no-auth baseline's median."
        ),
        header=("request", "median ms", "p99 ms", "added vs baseline", "latency ratio"),
    )
    for name, result in runs.items():
        section.rows.append(
            (
                name,
                f"{result.median_ms:.3f}",
                f"{result.p99_ms:.3f}",
                f"{result.median_ms - baseline.median_ms:+.3f} ms",
                f"{result.median_ms / baseline.median_ms:.2f}",
            )
        )
    return section


def _time_calls(fn: Any, n: int) -> list[float]:
    samples = []
    for _ in range(n):
        started = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def bench_auth(iterations: int) -> Section:
    """In-process cost of each auth step, and the HTTP latency it adds compared with the same
    endpoint called without authentication (the no-auth baseline) in the same run."""
    from simulator.clock import Clock
    from simulator.randomness import RandomSource
    from simulator.services.access.keys import KeyService
    from simulator.services.access.limits import FixedWindowLimiter
    from simulator.services.access.proofs import (
        ProofService,
        ProofSettings,
        TakerProof,
        taker_control_message,
    )

    class NoChain:
        async def is_valid_signature(
            self, chain_id: int, signer: str, digest: bytes, signature: bytes
        ) -> bool:
            raise AssertionError("EOA proofs need no chain read")

    clock = Clock()
    keys = KeyService(clock, RandomSource(1))
    partner = keys.create_partner("bench")
    key, full = keys.create_key(
        partner_id=partner.partner_id, environment="test", scopes=frozenset({"trades:write"})
    )
    limiter = FixedWindowLimiter(clock)
    proofs = ProofService(clock, NoChain(), ProofSettings())
    account = Account.create()

    def keyed() -> None:
        found = keys.authenticate(full)
        limiter.hit(f"rate:key:{found.key_id}", 10**9)
        assert "trades:write" in found.scopes

    loop = asyncio.new_event_loop()
    granted_caller = "ip:127.0.0.9"
    first = _fresh_proof(account, clock)
    loop.run_until_complete(
        proofs.authorize(taker=account.address, chain_id=97, proof=first, caller=granted_caller)
    )

    def with_grant() -> None:
        loop.run_until_complete(
            proofs.authorize(taker=account.address, chain_id=97, proof=None, caller=granted_caller)
        )

    prepared = [_fresh_proof(account, clock) for _ in range(iterations)]
    it = iter(prepared)

    def fresh() -> None:
        loop.run_until_complete(
            proofs.verify(taker=account.address, chain_id=97, proof=next(it), caller="ip:x")
        )

    rows = {
        "API key (authenticate + limiter + scope)": _time_calls(keyed, iterations),
        "proof grant lookup": _time_calls(with_grant, iterations),
        "fresh EOA proof (EIP-712 hash + recover + nonce)": _time_calls(fresh, iterations),
    }
    loop.close()
    del TakerProof, taker_control_message, key
    section = Section(
        title="Auth layer cost",
        intro=(
            f"In-process, {iterations} calls each, median and p99 per call; targets: < 0.5 ms "
            "with a key or a grant, < 1 ms with a fresh EOA proof. Per second = 1000 / median."
        ),
        header=("step", "median ms", "p99 ms", "per second (1 core)", "target"),
    )
    for name, samples in rows.items():
        median = statistics.median(samples)
        target = "< 1 ms" if "fresh" in name else "< 0.5 ms"
        section.rows.append(
            (
                name,
                f"{median:.3f}",
                f"{percentile(samples, 99):.3f}",
                f"{1000 / median:.0f}",
                target,
            )
        )
    return section


def _fresh_proof(account: Any, clock: Any) -> Any:
    from simulator.services.access.proofs import TakerProof, taker_control_message

    nonce = os.urandom(32)
    issued = clock.millis()
    message = taker_control_message(account.address, 97, nonce, issued)
    signature = Account.sign_message(message, account.key).signature
    return TakerProof(nonce, issued, bytes(signature))
