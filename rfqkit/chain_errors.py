"""The one exception every chain reader raises when it cannot read: shared by the chain client here
and the ports of the simulator's services (which must not import the client's HTTP library)."""

from __future__ import annotations


class ChainUnreadable(Exception):
    """A chain read failed (node down, timeout, RPC error): the answer is unknown, not false."""
