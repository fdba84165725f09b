"""Two `rfqsim serve` processes on one set of chains and one Redis: what they share holds
across them, driven at both at once with real parallel requests."""

from __future__ import annotations

from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from rfqsim.pytest_plugin import RfqSim
from simulator.adapters.redis.server import RedisNode
from tests.integration.firm_quotes import firm_request
from tests.integration.serve_process import serve


def outcome(answer: tuple[int, dict[str, Any]]) -> str:
    status, body = answer
    if status == 200:
        return str(body["data"]["status"])
    return f"{status} {body['error']['details'].get('reason')}"


def test_the_outstanding_cap_holds_across_two_instances(
    tmp_path: Path, redis_node: RedisNode
) -> None:
    """One key, cap 4, ten firm requests at once, five to each instance: four quotes in all
    and six refusals naming the cap (each instance alone would have quoted four)."""
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    with serve(tmp_path / "one", "--redis-url", redis_node.url) as one:
        attach = [f"--rpc-url={c['chain_id']}={c['rpc_url']}" for c in one.info["chains"]]
        with serve(tmp_path / "two", "--redis-url", redis_node.url, *attach) as two:
            sims = [RfqSim(one.api_url, one.info), RfqSim(two.api_url, two.info)]
            assert sims[0].demo_keys["taker-test"] == sims[1].demo_keys["taker-test"]
            with ThreadPoolExecutor(max_workers=10) as pool:
                answers = list(pool.map(firm_request, [sims[i % 2] for i in range(10)]))
            counts = Counter(outcome(a) for a in answers)
            assert counts == Counter({"quoted": 4, "429 outstanding_rfq_cap": 6}), answers
            quoted_by = Counter(i % 2 for i, a in enumerate(answers) if a[0] == 200)
            # the two draw their ids apart (same seed): no RFQ id names two RFQs
            assert len({a[1]["data"]["rfqId"] for a in answers if a[0] == 200}) == 4
            deadlines = sorted(
                a[1]["data"]["quote"]["latestOrderDeadline"] for a in answers if a[0] == 200
            )
            for status, body in answers:
                if status == 429:
                    assert body["error"]["details"]["nextSlotFreeAt"] == deadlines[0], (
                        body,
                        quoted_by,
                    )
