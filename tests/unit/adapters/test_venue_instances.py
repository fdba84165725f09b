"""The other instances of `--instances N` start from the first one's arguments, less the ones
each has its own of."""

from __future__ import annotations

from simulator.adapters.sim.venue_instances import others_argv


def test_the_others_keep_the_shared_arguments_and_drop_their_own() -> None:
    first = [
        "--instances", "3", "--port", "8080", "--seed=7", "--ready-file=/tmp/r.json",
        "--no-makers", "--config", "venue.yaml", "--scenario", "s.yaml", "--rpc-port=0",
        "--redis-url", "unix:///x", "--allowed-host", "sim.test", "--makers-process=in",
        "--provider-port", "9000", "--no-control-api",
    ]  # fmt: skip
    assert others_argv(first) == [
        "--seed=7", "--config", "venue.yaml", "--allowed-host", "sim.test", "--no-control-api",
    ]  # fmt: skip
