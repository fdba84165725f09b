"""The one exception every chain reader raises when it cannot read: shared by the chain client here
and the ports of the simulator's services (which must not import the client's HTTP library)."""

from __future__ import annotations


class ChainUnreadable(Exception):
    """A chain read failed (node down, timeout, RPC error): the answer is unknown, not false."""


class ChainUnavailable(ChainUnreadable):
    """The node did not answer, or answered with a JSON-RPC error (or the fault switch for this
    chain is on)."""
