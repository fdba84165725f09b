"""A loopback port for a process a test starts, which binds it later.

Binding port 0 and closing it is a race on a busy machine: the kernel hands ports of its
ephemeral range to every outgoing connection and to every other bind to port 0, so the port can
be taken between the pick and the child's bind (the integrator quickstart's webhook handler
once found its port "already in use" in a loaded CI run). A port below that range is never
handed out by the kernel; only explicit binds compete for it. Each xdist worker picks from its
own slice of it, from a random point, and skips a port that is bound now."""

from __future__ import annotations

import os
import random
import socket
from pathlib import Path

RANGE_FILE = Path("/proc/sys/net/ipv4/ip_local_port_range")
LOWEST = 20_000  # below: well-known and registered services' usual ports
WORKER_SLICES = 8  # xdist workers gw0..gw7 get a slice each; more wrap around


def _ephemeral_start() -> int:
    try:
        return int(RANGE_FILE.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32_768  # Linux's default


def _worker() -> int:
    name = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    return int(name[2:]) if name[2:].isdigit() else 0


def unclaimed_port(span: int = 1) -> int:
    """A port P of 127.0.0.1 such that nothing is bound to P .. P + span - 1 (a simulator's two
    chains take two ports in a row), outside the kernel's ephemeral range."""
    top = max(_ephemeral_start(), LOWEST + WORKER_SLICES * (span + 1))
    size = (top - LOWEST) // WORKER_SLICES - (span - 1)
    first = LOWEST + (_worker() % WORKER_SLICES) * (size + span - 1)
    start = random.SystemRandom().randrange(size)
    for step in range(size):
        port = first + (start + step) % size
        if all(_free(port + i) for i in range(span)):
            return port
    raise RuntimeError(f"no {span} free loopback ports in a row in {first}-{first + size - 1}")


def _free(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True
