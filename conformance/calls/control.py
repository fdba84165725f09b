"""What a test changes on the target and must put back when it ends, however it ends. Through
the simulator's ``/_sim`` control API: :class:`Fleet` / :func:`controlled_fleet` reconfigure the
simulated makers and restore their settings (waiting for fresh levels), :func:`faults` switches
simulator faults on and clears them, :func:`limits` sets rate limits and restores the previous
values. Through the public API: :class:`Janitor` / :func:`janitor` cancel the firm quotes a test
leaves live, so their inventory reservations do not leak into later tests.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from eth_utils.address import to_checksum_address

from conformance.calls.rfq_calls import cancel
from conformance.deployment.sim_control import SimControl
from conformance.wire.chain import WAIT_TIMEOUT, wait_for
from conformance.wire.client import Client


class Janitor:
    """Firm quotes a test leaves live, cancelled when it ends: their reservation on the makers'
    inventory would otherwise show up as ``reservedUntil`` in later tests' no-quotes."""

    def __init__(self) -> None:
        self.quotes: list[tuple[Client, dict[str, Any]]] = []

    def keep(self, client: Client, data: Mapping[str, Any]) -> dict[str, Any]:
        if data.get("status") == "quoted":
            self.quotes.append((client, dict(data)))
        return dict(data)

    def cleanup(self) -> None:
        for client, data in self.quotes:
            with contextlib.suppress(Exception):
                cancel(client, str(data["rfqId"]), str(data["claimToken"]))
        self.quotes.clear()


@contextlib.contextmanager
def janitor() -> Iterator[Janitor]:
    keeper = Janitor()
    try:
        yield keeper
    finally:
        keeper.cleanup()


# -- the simulated maker fleet ------------------------------------------------------------

# What PATCH /_sim/makers/{name} accepts, i.e. what a restore must put back.
_PATCHABLE = (
    "behaviour",
    "latency",
    "spread_bps",
    "impact_bps",
    "max_inventory_fraction",
    "flaky_decline_fraction",
    "mids",
    "quote_ttl_ms",
    "deadline_slack_s",
)
# Changes that move a maker's published levels (not just its replies).
_PRICING = frozenset({"spread_bps", "impact_bps", "max_inventory_fraction", "mids"})
REPUBLISH_S = 0.6
FAST = {"behaviour": "normal", "latency": {"kind": "fixed", "ms": 5}}


class Fleet:
    """The simulated makers (``/_sim/makers``): reconfigured by a test, restored after it."""

    def __init__(self, sim: SimControl) -> None:
        self.sim = sim
        self.saved: dict[str, dict[str, Any]] = {}
        self.wallets: dict[str, str] = {}
        self.touched: set[str] = set()
        self.repriced = False  # a change that moves published levels was made
        for member in self.members():
            name = str(member["name"])
            config = member["config"]
            self.saved[name] = {k: config[k] for k in _PATCHABLE if k in config}
            self.wallets[name] = to_checksum_address(member["wallet"])

    def members(self) -> list[dict[str, Any]]:
        data = self.sim.call("GET", "makers")
        fleet: list[dict[str, Any]] = data["fleet"]
        return fleet

    def online(self) -> list[dict[str, Any]]:
        data = self.sim.call("GET", "makers")
        online: list[dict[str, Any]] = data["online"]
        return online

    def member(self, name: str) -> dict[str, Any]:
        for member in self.members():
            if member["name"] == name:
                return member
        raise KeyError(name)

    def rfqs_seen(self) -> dict[str, int]:
        """How many firm requests each simulated maker has received so far."""
        return {str(m["name"]): int(m["stats"]["rfqs"]) for m in self.members()}

    def live_quotes(self) -> dict[str, int]:
        """How many of its signed quotes each simulated maker still holds inventory for."""
        return {str(m["name"]): int(m["live_quotes"]) for m in self.members()}

    @property
    def names(self) -> list[str]:
        return sorted(self.saved)

    def wallet(self, name: str) -> str:
        return self.wallets[name]

    def name_of(self, wallet: str) -> str:
        for name, address in self.wallets.items():
            if address.lower() == wallet.lower():
                return name
        raise KeyError(wallet)

    def patch(self, name: str, **changes: Any) -> None:
        self.touched.add(name)
        if _PRICING & changes.keys() or changes.get("behaviour") == "underfunded":
            self.repriced = True
        self.sim.call("PATCH", f"makers/{name}", changes)

    def only(self, config: Mapping[str, Mapping[str, Any]]) -> None:
        """Makers named in ``config`` get those changes (and go online); the rest go offline."""
        for name in self.names:
            if name in config:
                self.patch(name, **{**config[name], "online": True})
            else:
                self.patch(name, online=False)

    def wait_levels(self, names: Iterable[str], *, timeout: float = WAIT_TIMEOUT) -> None:
        """Wait until each named maker is connected with fresh levels on every pair."""
        wanted = {self.wallets[n].lower() for n in names}

        def probe() -> bool | None:
            by_wallet: dict[str, set[str]] = {}
            for entry in self.online():
                if entry["pairs_with_levels"] > 0:
                    by_wallet.setdefault(entry["wallet"].lower(), set()).add(entry["environment"])
            ready = all(by_wallet.get(w) == {"live", "test"} for w in wanted)
            return True if ready else None

        wait_for(probe, timeout=timeout, what=f"fresh levels from {sorted(names)}")

    def restore(self) -> None:
        for name in sorted(self.touched):
            self.sim.call("PATCH", f"makers/{name}", {**self.saved[name], "online": True})
        if self.touched:
            self.wait_levels(self.touched)
        if self.repriced:
            # A reconfigured maker republishes at once, but the server coalesces levels to one
            # update per 400 ms: let the restored levels land before the next test reads them.
            time.sleep(REPUBLISH_S)
        self.touched.clear()
        self.repriced = False


@dataclass(frozen=True)
class Liquidity:
    """Makers quoting on the test chain; ``makers`` are their wallets when known (the
    simulator's fleet), None on a deployment that does not say."""

    makers: frozenset[str] | None
    fleet: Fleet | None = None  # the simulated fleet (its counters), on a simulator only


@contextlib.contextmanager
def controlled_fleet(sim: SimControl) -> Iterator[Fleet]:
    """The fleet for one test: its configs recorded first and restored (online) after. Waits
    for fresh levels from every online maker first (a clock advance by an earlier test makes
    all levels stale until the makers republish, about a second)."""
    fleet = Fleet(sim)
    try:
        fleet.wait_levels([str(m["name"]) for m in fleet.members() if m.get("online")])
        yield fleet
    finally:
        fleet.restore()


@contextlib.contextmanager
def faults(sim: SimControl, **switches: Any) -> Iterator[None]:
    """POST /_sim/faults with ``switches`` for the duration; DELETE /_sim/faults after."""
    try:
        sim.call("POST", "faults", switches)
        yield
    finally:
        sim.call("DELETE", "faults")


@contextlib.contextmanager
def limits(sim: SimControl, **values: Any) -> Iterator[dict[str, Any]]:
    """PUT /_sim/limits with ``values`` for the duration; the previous values after."""
    before = sim.limits()
    try:
        yield sim.set_limits(**values)
    finally:
        sim.set_limits(**{k: before[k] for k in values})
