"""Which fixed ports `rfqsim serve` will listen on, and whether each is free, checked before
anything starts: a taken port is one line naming it and the flag that moves it, not a traceback
after the chains and the provider sandbox already came up."""

from __future__ import annotations

import errno
import socket
from dataclasses import dataclass

from simulator.settings import Settings


@dataclass(frozen=True)
class PlannedPort:
    host: str
    port: int
    what: str  # "the API", "chain 56 RPC", ...
    flag: str  # how to move it: "--port PORT"


def planned_ports(settings: Settings) -> list[PlannedPort]:
    """Every fixed (non-zero) port this configuration binds; 0 (a free port) needs no check."""
    planned: list[PlannedPort] = []
    if settings.api.port:
        planned.append(PlannedPort(settings.api.host, settings.api.port, "the API", "--port PORT"))
    for chain in settings.chains:
        port = settings.anvil_port(chain.chain_id)
        if chain.rpc_url is None and port:
            planned.append(
                PlannedPort(
                    "127.0.0.1",
                    port,
                    f"chain {chain.chain_id} RPC",
                    f"--rpc-port {chain.chain_id}=PORT",
                )
            )
    ramp = settings.ramp
    if ramp.provider_url is None and ramp.provider_port:
        planned.append(
            PlannedPort(
                "127.0.0.1", ramp.provider_port, "the provider sandbox", "--provider-port PORT"
            )
        )
    return planned


def is_taken(host: str, port: int) -> bool:
    """Whether binding host:port fails because something holds it. SO_REUSEADDR as the servers
    themselves set it, so a socket in TIME_WAIT does not count as taken; a listener does."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            if exc.errno in (errno.EADDRINUSE, errno.EACCES):
                return True
            raise
    return False


def taken_port_messages(settings: Settings) -> list[str]:
    """One line per planned port that is taken; empty when all are free."""
    return [
        f"port {p.port} on {p.host} ({p.what}) is already in use; stop what holds it or move "
        f"{p.what} with {p.flag} (0: a free port)"
        for p in planned_ports(settings)
        if is_taken(p.host, p.port)
    ]
