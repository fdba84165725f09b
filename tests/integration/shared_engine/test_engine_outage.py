"""Two instances on one Redis, and the Redis dies: firm requests at either answer the spec's 503
envelope (`venue_unavailable`, transient), never a 500; when it comes back (empty) both quote
again, and the venue's configuration is written back by the instances that hold it."""

from __future__ import annotations

import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from rfqsim.pytest_plugin import RfqSim
from simulator.adapters.redis.server import RedisNode, start_redis
from tests.integration.firm_quotes import firm_request
from tests.integration.serve_process import serve
from tests.integration.shared_engine.test_two_instances import status_with

pytestmark = pytest.mark.xdist_group("engine_outage")


@pytest.fixture
def socket_dir() -> Iterator[Path]:
    # A short path of the test's own (a Unix socket's path must stay under 108 bytes), kept
    # across the server's restart so the instances find it again.
    with tempfile.TemporaryDirectory(prefix="rfqsim-outage-") as directory:
        yield Path(directory)


def quoted_or_503(sim: RfqSim) -> str:
    status, body = firm_request(sim)
    if status == 200:
        return str(body["data"]["status"])
    assert set(body) == {"error"}, body
    return f"{status} {body['error']['code']}"


def test_a_lost_engine_is_503_at_every_instance_until_it_returns(
    tmp_path: Path, socket_dir: Path
) -> None:
    node: RedisNode = start_redis(socket_dir)
    try:
        (tmp_path / "a").mkdir()
        with serve(tmp_path / "a", "--redis-url", node.url) as one:
            attach = [f"--rpc-url={c['chain_id']}={c['rpc_url']}" for c in one.info["chains"]]
            (tmp_path / "b").mkdir()
            with serve(tmp_path / "b", "--redis-url", node.url, *attach) as two:
                sims = [RfqSim(one.api_url, one.info), RfqSim(two.api_url, two.info)]
                assert [quoted_or_503(sim) for sim in sims] == ["quoted", "quoted"]
                node.stop()
                assert [quoted_or_503(sim) for sim in sims] == [
                    "503 venue_unavailable",
                    "503 venue_unavailable",
                ]
                node = start_redis(socket_dir)  # back, empty
                for sim in sims:
                    for _ in range(250):  # bounded: redis-py reconnects on the next command
                        if quoted_or_503(sim) == "quoted":
                            break
                        time.sleep(0.02)
                    assert quoted_or_503(sim) == "quoted"
                # the instances write the venue's configuration back: the demo key is there again
                demo_key_id = sims[0].demo_keys["taker-test"].split(".")[0]
                with redis.Redis.from_url(node.url, decode_responses=True) as engine:
                    for _ in range(250):  # bounded: each instance retries every second
                        if engine.hexists("rfqsim:config:access.keys:keys", demo_key_id):
                            break
                        time.sleep(0.02)
                    assert engine.hexists("rfqsim:config:access.keys:keys", demo_key_id)
                # and a key made at one now works at the other
                made = sims[0].call(
                    "POST", "/_sim/keys", {"environment": "test", "scopes": ["trades:read"]}
                )
                assert status_with(sims[1], made["key"]) == 404
    finally:
        node.stop()
