"""Start and stop a Redis server for several instances: Debian's `redis-server` (or the binary
`RFQSIM_REDIS_SERVER` names), listening on a Unix socket in a directory of its own, never on a
TCP port, so no page and no other machine can reach it and no port is chosen racily. Nothing is
written to disk (no RDB, no AOF): the engine holds live state that lapses within minutes. Like
Anvil, the server is asked by the kernel to die with its parent."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import redis

from rfqkit.anvil import die_with_parent, stop_child


class RedisStartError(RuntimeError):
    """redis-server could not be found or did not come up; the message says why."""


def find_redis_server() -> Path:
    override = os.environ.get("RFQSIM_REDIS_SERVER")
    if override:
        return Path(override)
    on_path = shutil.which("redis-server")
    if on_path:
        return Path(on_path)
    raise RedisStartError(
        "redis-server not found on PATH: install Debian's redis-server "
        "(`apt-get install redis-server`) or give --redis-url of a running Redis or Valkey"
    )


@dataclass
class RedisNode:
    """One running redis-server and the directory that holds its socket."""

    directory: Path
    process: subprocess.Popen[bytes] = field(repr=False)
    owns_directory: bool = True  # made by start_redis: removed on stop

    @property
    def socket(self) -> Path:
        return self.directory / "redis.sock"

    @property
    def url(self) -> str:
        return f"unix://{self.socket}"

    @property
    def pid(self) -> int:
        return self.process.pid

    def stop(self, timeout: float = 5.0) -> None:
        """Terminate the server and reap it (SIGKILL after `timeout` seconds)."""
        stop_child(self.process, timeout)
        if self.owns_directory:
            shutil.rmtree(self.directory, ignore_errors=True)


def start_redis(
    directory: Path | None = None, *, binary: Path | None = None, startup_timeout: float = 10.0
) -> RedisNode:
    """Start redis-server on a socket in `directory` (a new temporary one by default: a Unix
    socket's path must stay under 108 bytes) and wait until it answers PING."""
    server = binary or find_redis_server()
    if not server.exists():
        raise RedisStartError(f"redis-server binary {server} does not exist")
    owns = directory is None
    where = directory or Path(tempfile.mkdtemp(prefix="rfqsim-redis-"))
    socket = where / "redis.sock"
    args = [
        str(server),
        "--port", "0",  # no TCP listener at all
        "--unixsocket", str(socket),
        "--unixsocketperm", "700",
        "--save", "",
        "--appendonly", "no",
        "--dir", str(where),
        "--daemonize", "no",
        "--loglevel", "warning",
        "--logfile", str(where / "redis.log"),
    ]  # fmt: skip
    try:
        process = subprocess.Popen(
            args,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
            preexec_fn=die_with_parent,
        )
    except OSError as exc:
        raise RedisStartError(f"could not execute {server}: {exc}") from exc
    node = RedisNode(directory=where, process=process, owns_directory=owns)
    deadline = time.monotonic() + startup_timeout
    while process.poll() is None and time.monotonic() <= deadline:
        if socket.exists():
            try:
                with redis.Redis(unix_socket_path=str(socket), socket_timeout=1) as probe:
                    if probe.ping():
                        return node
            except redis.RedisError:
                pass
        time.sleep(0.01)
    if process.poll() is None:
        process.kill()
    process.wait()
    log = where / "redis.log"
    said = log.read_text(errors="replace")[-2000:].strip() if log.exists() else ""
    node.stop()
    raise RedisStartError(
        f"{server} did not answer on {socket} within {startup_timeout:.0f} s "
        f"(exit code {process.returncode}): {said or 'it said nothing'}"
    )
