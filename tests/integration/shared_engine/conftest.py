"""A real redis-server for the shared engine's tests, one per test module. Without
redis-server the tests skip with one line, except in CI (CI=true), where .ci/run installs it
and its absence fails the run."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from simulator.adapters.redis.server import (
    RedisNode,
    RedisStartError,
    find_redis_server,
    start_redis,
)


def require_redis_server() -> None:
    """redis-server is here, or the test skips (fails in CI)."""
    try:
        find_redis_server()
    except RedisStartError as missing:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{missing}; .ci/run installs it with apt-get")
        pytest.skip(str(missing))


@pytest.fixture(scope="module")
def redis_node() -> Iterator[RedisNode]:
    require_redis_server()
    node = start_redis()
    yield node
    node.stop()
