"""A MakerFleet of two makers (m0, m1 on chain 97) that are built but never started: nothing
connects, so the fleet's control surfaces can be tested without a simulator."""

from __future__ import annotations

from makers.config import FleetConfig, MakerConfig
from makers.fleet import MakerFleet, SimulatedMaker

URL = "http://127.0.0.1:9"  # never contacted: the makers are not started


def config(name: str, index: int) -> MakerConfig:
    return MakerConfig.model_validate({"name": name, "wallet_index": index, "chains": [97]})


def unstarted_fleet() -> MakerFleet:
    makers = (config("m0", 0), config("m1", 1))
    fleet = MakerFleet(
        FleetConfig(makers=makers),
        url=URL,
        credentials={m.name: [f"tx_test_{m.name}.secret"] for m in makers},
        rpc_urls={},
    )
    for maker in makers:
        fleet.makers[maker.name] = SimulatedMaker(
            maker, url=URL, api_keys=[f"tx_test_{maker.name}.secret"], chains={}
        )
    return fleet
