"""Where a firm quote's time goes: py-spy samples the simulator process (every thread, idle
included, without pausing it) while an open-loop load of firm quotes runs, and each sample of
the event loop's thread is put in one stage of the firm path by the frames on its stack.

How a sample is put in a stage: see TIER_1 and TIER_2 below."""

from __future__ import annotations

import asyncio
import shutil
import subprocess  # DEVNULL
import tempfile
from collections import Counter
from pathlib import Path

import aiohttp

from bench import processes
from bench.open_loop import OpenLoopResult, run_open_loop
from bench.report import Section
from bench.sim_api import FAST_MAKERS, setup_bench_key, token_address

PY_SPY = Path(processes.RFQSIM).with_name("py-spy")
IDLE = "idle (waiting in epoll: for makers, Anvil or the next request)"

# (stage, substrings of a frame "function (file:line)"). Tier 1 is tried in order against the
# whole stack (first match wins): a sample inside a chain read made by a quote check is that
# check's, however deep the HTTP client frames go. Tier 2 goes from the innermost frame outwards,
# so a sample in the handler's own rendering is "rendering", not "middleware" around it.
TIER_1: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "makers' own work (in-process fleet: pricing, signing, their WebSocket client)",
        (
            "makers/simulated.py",
            "makers/quoting.py",
            "makers/client.py",
            "makers/fleet.py",
            "makers/chainbook.py",
            "makers/chain.py",
            "makers/levels.py",
            "makers/stream.py",
            "makers/commitments.py",
        ),
    ),
    ("quote checks: maker balance/allowance/nonce reads", ("ChainReads.maker_funding",)),
    ("proof of funds (incl. the taker balance read)", ("simulator/services/rfq/funds.py",)),
    ("quote checks: signature recovery", ("check_signature",)),
    ("quote checks: terms, holds, order hash", ("simulator/services/rfq/quote_checks.py",)),
    ("no-quote: reservedUntil over live holds", ("RfqService._reserved_until",)),
)
TIER_2: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "auction and maker-stream messaging (WebSocket frames, JSON)",
        (
            "simulator/services/rfq/auction.py",
            "simulator/services/rfq/makers.py",
            "simulator/adapters/rfq/maker_stream.py",
            "simulator/api/rfq/maker_stream.py",
            "aiohttp/_websocket",
            "aiohttp/web_ws.py",
        ),
    ),
    (
        "settlement bookkeeping (store, slots, holds, fill indexer, sweeps)",
        (
            "simulator/services/rfq/settlement.py",
            "simulator/adapters/rfq/indexer.py",
            "simulator/services/rfq/slots.py",
            "simulator/services/rfq/inventory.py",
            "simulator/services/rfq/store.py",
            "simulator/runtime/housekeeping.py",
        ),
    ),
    ("auth (key, limiter, scope)", ("simulator/services/access/",)),
    ("request parsing and validation", ("simulator/api/http/parsing.py", "validate_trade")),
    (
        "response rendering",
        ("simulator/api/rfq/schemas.py", "simulator/api/http/responses.py", "model_dump"),
    ),
    ("other RFQ service work", ("simulator/services/rfq/", "simulator/api/rfq/")),
    (
        "JSON-RPC client to Anvil (requests written and answers read, all callers)",
        (
            "rfqkit/chain.py",
            "simulator/adapters/rfq/chain_reads.py",
            "aiohttp/client_reqrep.py",
            "aiohttp/client.py",
            "aiohttp/connector.py",
        ),
    ),
    (
        "HTTP server and middleware",
        (
            "aiohttp/web_protocol.py",
            "aiohttp/web_app.py",
            "aiohttp/web_response.py",
            "simulator/api/",
        ),
    ),
)


def py_spy() -> str:
    """The py-spy binary: in .venv (`.venv/bin/pip install py-spy`) or on PATH."""
    found = str(PY_SPY) if PY_SPY.exists() else shutil.which("py-spy")
    if found is None:
        raise RuntimeError("the profile needs py-spy: .venv/bin/pip install py-spy")
    return found


def classify(stack: list[str]) -> str:
    if stack and stack[-1].startswith(("EpollSelector.select", "select (")):
        return IDLE
    for stage, needles in TIER_1:
        if any(needle in frame for frame in stack for needle in needles):
            return stage
    for frame in reversed(stack):
        for stage, needles in TIER_2:
            if any(needle in frame for needle in needles):
                return stage
    return "event loop, sockets and other"


def stage_shares(raw: str) -> tuple[Counter[str], int]:
    """py-spy's raw (collapsed) output -> samples per stage of the event loop's thread."""
    counts: Counter[str] = Counter()
    for line in raw.splitlines():
        stack_text, _, count = line.rpartition(" ")
        frames = stack_text.split(";")
        if not any("BaseEventLoop.run_forever" in f for f in frames):
            continue  # other threads: Anvil log pumps, the resolver
        counts[classify(frames)] += int(count)
    return counts, sum(counts.values())


async def _load(
    api: str, info: dict[str, object], pid: int, rate: float, seconds: float
) -> tuple[OpenLoopResult, str]:
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
        key = await setup_bench_key(session, api)
        takers = [w["address"] for w in info["demo_wallets"]]  # type: ignore[attr-defined]
        base = {
            "chainId": 97,
            "sellToken": token_address(info, 97, "USDT"),
            "buyToken": token_address(info, 97, "NGNS"),
            "sellAmount": str(10**17),
        }
        headers = {"Authorization": f"Bearer {key}"}
        url = f"{api}/v2/rfq/request"

        def body(i: int) -> dict[str, object]:
            return dict(base, taker=takers[i % len(takers)])

        await run_open_loop(session, url, rate=20, seconds=1, body=body, headers=headers)
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "profile.txt"
            spy = await asyncio.create_subprocess_exec(
                *[
                    py_spy(),
                    "record",
                    "--pid",
                    str(pid),
                    "--format",
                    "raw",
                    "--rate",
                    "100",
                    "--idle",
                    "--nonblocking",
                    "-d",
                    str(int(seconds)),
                    "-o",
                    str(out),
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            await asyncio.sleep(0.5)  # py-spy attaches
            result = await run_open_loop(
                session, url, rate=rate, seconds=seconds - 1, body=body, headers=headers
            )
            await spy.wait()
            return result, out.read_text() if out.exists() else ""


def bench_profile(rate: float, seconds: float, *serve_args: str) -> Section:
    with processes.simulator("--config", str(FAST_MAKERS), *serve_args) as started:
        result, raw = asyncio.run(
            _load(started.info["api_url"], started.info, started.process.pid, rate, seconds)
        )
    counts, total = stage_shares(raw)
    busy = total - counts.get(IDLE, 0)
    quotes = sum(result.outcomes.values())
    section = Section(
        title="Firm-path CPU profile by stage",
        intro=(
            f"py-spy 100 Hz (non-blocking, idle included) on the `rfqsim serve` process, event "
            f"loop thread only, while firm quotes arrive open loop at {rate:.0f}/s for "
            f"{seconds - 1:.0f} s (four fast makers, proof of funds on, "
            f"{' '.join(serve_args) or 'default wiring'}); {total} samples, of which {busy} busy. "
            f"Load: achieved {result.achieved_rate:.0f}/s, p50 {result.pct(50):.1f} ms, "
            f"p99 {result.pct(99):.1f} ms; {quotes} answers."
        ),
        header=("stage", "samples", "share of all", "share of busy", "ms of CPU per quote"),
    )
    per_quote = 1000 / 100 / max(quotes, 1)  # one sample = 10 ms of the thread
    for stage, count in counts.most_common():
        section.rows.append(
            (
                stage,
                str(count),
                f"{count / total:.0%}",
                "—" if stage == IDLE else f"{count / max(busy, 1):.0%}",
                "—" if stage == IDLE else f"{count * per_quote:.2f}",
            )
        )
    return section


__all__ = ["bench_profile", "classify", "stage_shares"]
