"""GET /v1/status's rules (services/shared/health.py) with a fake probe: chains are critical, fill
indexes are not; a configured chain the venue does not serve is down."""

from __future__ import annotations

from simulator.clock import Clock
from simulator.services.shared.health import ProbeResult, StatusService
from tests.unit.services.v1_fakes import venue


class FakeProbe:
    def __init__(self) -> None:
        self.chains: dict[int, ProbeResult] = {}
        self.indexes: dict[int, ProbeResult] = {}

    async def chain(self, chain_id: int) -> ProbeResult:
        return self.chains.get(chain_id, ProbeResult(up=True, block=10))

    def fill_index(self, chain_id: int) -> ProbeResult:
        return self.indexes.get(chain_id, ProbeResult(up=True, block=9))


def service(probe: FakeProbe, chain_ids: tuple[int, ...] = (56, 97)) -> StatusService:
    return StatusService(Clock(), venue(), probe, chain_ids)


async def test_everything_up_is_operational_with_one_check_per_dependency() -> None:
    status = await service(FakeProbe()).status()
    assert (status.status, status.http_status) == ("operational", 200)
    assert [(c.name, c.kind, c.critical, c.result.up) for c in status.checks] == [
        ("chain:56", "chain", True, True),
        ("fillIndex:56", "fillIndex", False, True),
        ("chain:97", "chain", True, True),
        ("fillIndex:97", "fillIndex", False, True),
    ]


async def test_a_paused_fill_index_is_degraded() -> None:
    probe = FakeProbe()
    probe.indexes[97] = ProbeResult(up=False, reason="paused", block=9)
    status = await service(probe).status()
    assert (status.status, status.http_status) == ("degraded", 200)
    down = [c for c in status.checks if not c.result.up]
    assert [(c.name, c.result.reason) for c in down] == [("fillIndex:97", "paused")]


async def test_an_unreachable_chain_is_down_503() -> None:
    probe = FakeProbe()
    probe.chains[56] = ProbeResult(up=False, reason="unreachable")
    probe.indexes[97] = ProbeResult(up=False, reason="paused")
    status = await service(probe).status()
    assert (status.status, status.http_status) == ("down", 503)


async def test_a_configured_chain_the_venue_does_not_serve_is_down() -> None:
    status = await service(FakeProbe(), (56, 97, 1)).status()
    assert status.status == "down"
    by_name = {c.name: c.result for c in status.checks}
    assert by_name["chain:1"].reason == by_name["fillIndex:1"].reason == "not_started"
