"""The banner lists the demo keys an integrator starts from; the ready file of `rfqsim serve
--no-control-api` (operator_inputs) hands a QA team those and the QA keys, each with its
partner, in the config file's shape."""

from __future__ import annotations

from typing import Any

from conformance.wire.inputs import inputs_of
from simulator.banner import banner, key_records, operator_inputs
from simulator.clock import Clock
from simulator.randomness import RandomSource
from simulator.services.access.keys import KeyService, create_demo_keys, create_qa_keys

WALLET = {"label": "demo-0", "address": "0x" + "ab" * 20, "private_key": "0x" + "11" * 32}


def info_with_keys() -> dict[str, Any]:
    service = KeyService(Clock(), RandomSource(1))
    return {
        "version": "0",
        "environment": "staging",
        "seed": 3,
        "api_url": "http://127.0.0.1:1",
        "console_url": "http://127.0.0.1:1/_sim/console",
        "chains": [],
        "demo_wallets": [WALLET],
        "demo_keys": key_records(service, create_demo_keys(service, 3)),
        "qa_keys": key_records(service, create_qa_keys(service, 3)),
    }


def test_the_banner_lists_the_demo_keys_and_not_the_qa_keys() -> None:
    info = info_with_keys()
    printed = banner(info, control_api=False)
    for key in info["demo_keys"]:
        assert key["key"] in printed
    for key in info["qa_keys"]:
        assert key["key"] not in printed


def test_the_operators_inputs_hold_every_key_with_its_partner() -> None:
    info = info_with_keys()
    handed = operator_inputs(info)
    everything = [*info["demo_keys"], *info["qa_keys"]]
    assert [k["key"] for k in handed["api_keys"]] == [k["key"] for k in everything]
    inputs = inputs_of(handed)
    labels = {k.key: k.partner for k in inputs.keys}
    assert labels == {k["key"]: k["partner"] for k in everything}
    assert set(labels.values()) == {"demo", "demo-other"}
    # Exact-scope keys of the demo partner: a key missing a scope without the control API.
    exact = {k.scopes for k in inputs.keys if k.partner == "demo" and k.environment == "test"}
    for scope in ("trades:write", "trades:read", "webhooks:manage"):
        assert frozenset({scope}) in exact


def test_the_banner_names_the_instances_of_a_venue_of_several() -> None:
    info = info_with_keys()
    assert "instances" not in banner(info)
    info["instances"] = [{"id": 0, "pid": 11, "api_url": ""}]
    assert "instances" not in banner(info)  # one process: nothing to say
    info["instances"].append({"id": 1, "pid": 12, "api_url": ""})
    line = next(x for x in banner(info).splitlines() if x.strip().startswith("instances"))
    assert "2 processes on this address (pids 11, 12;" in line
