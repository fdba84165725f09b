"""`rfqsim serve --state-dir DIR`: the state written on stop and read on start.

    DIR/rfqsim-state.json   format, versions, seed, chains, and every service participant's
                            dump, in the participant's own schema (services/shared/state.py)
    DIR/chain-<id>.state    that chain's `anvil_dumpState` (gzip JSON as hex, as Anvil gives it)

Everything is checked before anything starts: a file that is not ours, from another rfqsim
version, for another seed or other chains, or corrupt is refused with one line naming the file;
each participant's part is then read with its schema (`StateRegistry.check`) once the app is
built, before it serves.
Files are replaced atomically (write, then rename), the chains' first, so a crash while saving
leaves the previous state whole."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rfqkit.timestamps import isoformat
from simulator import __version__

FORMAT = "rfqsim-state"
# Bump when a participant's schema changes shape. 2: every participant saves through a declared
# schema (services/shared/state.py) instead of the tagged reflection codec of version 1. 4: the
# webhook outbox saves only pending deliveries (finished ones are rows of the history file).
FORMAT_VERSION = 4
STATE_FILE = "rfqsim-state.json"


class StateDirError(RuntimeError):
    """One line: which file, what is wrong, what to do."""


@dataclass(frozen=True)
class SavedState:
    path: Path  # the state file
    saved_at: str  # ISO time of the save (wall clock)
    services: dict[str, dict[str, Any]]
    chains: dict[int, str]  # chain id -> anvil state export


def chain_file(directory: Path, chain_id: int) -> Path:
    return directory / f"chain-{chain_id}.state"


def read_state_dir(directory: Path, *, seed: int, chain_ids: list[int]) -> SavedState | None:
    """The saved state, or None when the directory holds none yet (a first start)."""
    path = directory / STATE_FILE
    if directory.exists() and not directory.is_dir():
        raise StateDirError(f"state directory {directory} is a file, not a directory")
    if not path.exists():
        return None
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise StateDirError(f"{path}: not a readable rfqsim state file ({exc})") from exc
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise StateDirError(f'{path}: not an rfqsim state file (no "format": "{FORMAT}")')
    written_by = document.get("simulator_version")
    if document.get("format_version") != FORMAT_VERSION or written_by != __version__:
        raise StateDirError(
            f"{path}: written by rfqsim {written_by} (state format "
            f"{document.get('format_version')}); this is rfqsim {__version__} (format "
            f"{FORMAT_VERSION}): start with another --state-dir or move it away"
        )
    if document.get("seed") != seed:
        raise StateDirError(
            f"{path}: saved with --seed {document.get('seed')}, started with --seed {seed} "
            "(demo keys and wallets differ): start with the same seed or another --state-dir"
        )
    saved_chains = sorted(int(c) for c in document.get("chains", []))
    if saved_chains != sorted(chain_ids):
        raise StateDirError(
            f"{path}: saved for chains {saved_chains}, configured chains are "
            f"{sorted(chain_ids)}: start with the same chains or another --state-dir"
        )
    services = document.get("services")
    if not isinstance(services, dict):
        raise StateDirError(f'{path}: has no "services" object')
    for name, dump in services.items():
        if not isinstance(dump, dict):
            raise StateDirError(f"{path}: corrupt state of {name} (not an object)")
    chains: dict[int, str] = {}
    for chain_id in saved_chains:
        file = chain_file(directory, chain_id)
        try:
            text = file.read_text(encoding="ascii").strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise StateDirError(f"{file}: cannot read the chain's saved state ({exc})") from exc
        if not text.startswith("0x") or len(text) < 4:
            raise StateDirError(f"{file}: not an Anvil state export (expected 0x… hex)")
        try:
            bytes.fromhex(text[2:])
        except ValueError as exc:
            raise StateDirError(f"{file}: corrupt Anvil state export ({exc})") from exc
        chains[chain_id] = text
    return SavedState(path, str(document.get("saved_at")), services, chains)


def _replace(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def write_state_dir(
    directory: Path, *, seed: int, services: dict[str, dict[str, Any]], chains: dict[int, str]
) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for chain_id, export in chains.items():
        _replace(chain_file(directory, chain_id), export)
    document = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "simulator_version": __version__,
        "seed": seed,
        "saved_at": isoformat(datetime.now(UTC), timespec="seconds"),
        "chains": sorted(chains),
        "services": services,
    }
    path = directory / STATE_FILE
    _replace(path, json.dumps(document, separators=(",", ":")))
    return path
