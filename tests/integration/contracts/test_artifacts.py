"""The committed artifacts are exactly what the pinned compiler makes of the sources, and the
deployed runtime code is the artifact's."""

from __future__ import annotations

import pytest

from contracts.artifacts import artifact_names, load_artifact
from contracts.build import SETTINGS, compile_all, diff_artifacts, render_artifact
from tests.integration.contracts.env import Env

pytestmark = pytest.mark.integration

EXPECTED = {
    "RfqReactor",
    "SampleRouter",
    "SignatureTransfer",
    "SmartWallet",
    "SmartWalletFactory",
    "TestERC20",
    "TestUSDT",
    "UniversalSigValidator",
}


def test_fresh_build_equals_committed_artifacts() -> None:
    fresh = compile_all()
    assert set(fresh) == EXPECTED
    assert diff_artifacts(fresh) == []
    for name, artifact in fresh.items():
        committed = load_artifact(name)
        assert committed.bytecode.hex() == artifact["bytecode"].removeprefix("0x")
        assert committed.abi == artifact["abi"]
        assert artifact["compiler"]["version"].startswith("0.8.37+commit.")
        assert artifact["compiler"]["settings"] == SETTINGS
        assert render_artifact(artifact).endswith("}\n")
    assert set(artifact_names()) == EXPECTED


def test_no_metadata_trailer_in_bytecode() -> None:
    # appendCBOR=false: no CBOR metadata ({"solc": <version>} = a1 64 "solc" 43 ...) in the code,
    # which would otherwise tie the bytes to the build environment.
    for name in EXPECTED:
        assert b"\xa1\x64solcC" not in load_artifact(name).deployed_bytecode, name


@pytest.mark.parametrize("name", ["SampleRouter", "SmartWalletFactory"])
def test_deployed_code_matches_artifact(env: Env, name: str) -> None:
    # Only contracts without immutables: those have deploy-time values patched into the code.
    address = {"SampleRouter": env.router.address, "SmartWalletFactory": env.factory.address}[name]
    assert env.code(address) == load_artifact(name).deployed_bytecode
