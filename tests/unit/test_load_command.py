"""loadtests/run.py `locust_command`: with --processes, the forked workers find their master on a
port of the run's own, so two load runs on one machine never join (each master once counted the
other's workers: a CI run beside another)."""

from __future__ import annotations

from pathlib import Path

from loadtests.run import locust_command, parser


def _after(command: list[str], flag: str) -> str:
    return command[command.index(flag) + 1]


def test_forked_workers_meet_their_master_on_a_port_of_this_run(tmp_path: Path) -> None:
    args = parser().parse_args(["rfq_storm", "--processes", "2"])
    first = locust_command(args, "http://127.0.0.1:8080", 8, tmp_path)
    second = locust_command(args, "http://127.0.0.1:8080", 8, tmp_path)
    for command in (first, second):
        assert _after(command, "--master-port") == _after(command, "--master-bind-port")
        assert _after(command, "--master-host") == "127.0.0.1"
        assert _after(command, "--master-port") != "5557"  # locust's default, shared by all
    assert _after(first, "--master-port") != _after(second, "--master-port")


def test_a_master_for_remote_workers_keeps_the_port_it_was_given(tmp_path: Path) -> None:
    args = parser().parse_args(["rfq_storm", "--master", "--master-port", "6000"])
    command = locust_command(args, "http://127.0.0.1:8080", 8, tmp_path)
    assert _after(command, "--master-bind-port") == "6000"
