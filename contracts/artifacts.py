"""Load the committed compiler artifacts (`contracts/artifacts/<Contract>.json`)."""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ARTIFACTS_DIR = Path(__file__).resolve().parent / "artifacts"


@dataclass(frozen=True)
class Artifact:
    """One compiled contract. `bytecode` is the creation code (append abi-encoded constructor
    arguments to deploy); `deployed_bytecode` is the runtime code. Treat `abi` as read-only:
    instances are cached and shared."""

    name: str
    abi: list[dict[str, Any]]
    bytecode: bytes
    deployed_bytecode: bytes


def artifact_names() -> tuple[str, ...]:
    """Every contract with a committed artifact, sorted."""
    return tuple(sorted(path.stem for path in ARTIFACTS_DIR.glob("*.json")))


@functools.cache
def load_artifact(name: str) -> Artifact:
    """The artifact of contract `name` (e.g. "RfqReactor"); KeyError if there is none."""
    path = ARTIFACTS_DIR / f"{name}.json"
    if not path.is_file():
        raise KeyError(f"no artifact for contract {name!r}; known: {', '.join(artifact_names())}")
    data = json.loads(path.read_text(encoding="utf-8"))
    return Artifact(
        name=data["contractName"],
        abi=data["abi"],
        bytecode=bytes.fromhex(data["bytecode"].removeprefix("0x")),
        deployed_bytecode=bytes.fromhex(data["deployedBytecode"].removeprefix("0x")),
    )
