"""The control channel of a maker fleet: what a simulator asks its simulated fleet (the members'
status, a live change of one maker, stop and start, a chain that was restarted) and how the
fleet's refusals are told apart, for a fleet in the simulator's own process and for one in a
child process (makers/child.py) alike.

Over a child's stdin and stdout the channel is JSON lines: a request `{"id": 7, "op":
"reconfigure", "args": {...}}`, its reply `{"id": 7, "result": ...}` or `{"id": 7, "error":
{"kind": "not_found", "message": "...", "issues": [...]}}`. Replies come in the order requests
finish (a reconnecting maker does not hold up a status read), matched by `id`. Secrets (maker
credentials, v1 keys, private keys of the config) travel only in the `start` request on stdin,
never on a command line.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from makers.client import MakerClientError
from makers.config import FleetConfig
from makers.fleet import MakerFleet, SimulatedMaker
from rfqkit.validation_issues import issues_from

# Kinds of refusal (ControlError.kind).
NOT_FOUND = "not_found"  # no maker of that name (or no fleet running)
INVALID_CONFIG = "invalid_config"  # the maker's config refuses the combination (with issues)
INVALID_VALUE = "invalid_value"  # a value the maker refuses outright (ValueError)
UNREACHABLE = "unreachable"  # told to go online, it could not reconnect
FAILED = "failed"  # anything else (a bad request, an unexpected exception in the child)
KINDS = frozenset({NOT_FOUND, INVALID_CONFIG, INVALID_VALUE, UNREACHABLE, FAILED})


class ControlError(Exception):
    """A request the fleet refused or could not carry out; `issues` as the envelope's
    `details.issues` for INVALID_CONFIG."""

    def __init__(self, kind: str, message: str, issues: list[dict[str, Any]] | None = None) -> None:
        super().__init__(message)
        self.kind = kind if kind in KINDS else FAILED
        self.message = message
        self.issues = issues

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "message": self.message}
        if self.issues is not None:
            out["issues"] = self.issues
        return out

    @classmethod
    def from_json(cls, data: Any) -> ControlError:
        if not isinstance(data, dict):
            return cls(FAILED, f"malformed error reply: {data!r}")
        issues = data.get("issues")
        return cls(
            str(data.get("kind", FAILED)),
            str(data.get("message", "")),
            issues if isinstance(issues, list) else None,
        )


def encode(message: Mapping[str, Any]) -> bytes:
    """One message as one line (compact JSON, newline-terminated; JSON escapes any newline)."""
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"


def decode(line: bytes) -> dict[str, Any]:
    """One line back into its message; ValueError for anything but a JSON object."""
    message = json.loads(line)
    if not isinstance(message, dict):
        raise ValueError(f"a control message is a JSON object, got {line[:80]!r}")
    return message


def member_status(maker: SimulatedMaker) -> dict[str, Any]:
    """One member as /_sim/makers shows it: its status and its config without the private key."""
    return {
        **maker.status(),
        "config": maker.config.model_dump(mode="json", exclude={"private_key"}),
    }


async def reconfigure_maker(
    fleet: MakerFleet | None, name: str, changes: Mapping[str, Any]
) -> None:
    """Change one maker live; ControlError (NOT_FOUND, INVALID_CONFIG, INVALID_VALUE,
    UNREACHABLE) when it cannot be."""
    maker = fleet.makers.get(name) if fleet is not None else None
    if maker is None:
        raise ControlError(NOT_FOUND, f"No simulated maker named {name}")
    try:
        # The maker itself, not fleet.reconfigure(name, ...): a `name` among the changes
        # must be refused as a fixed field, not collide with that parameter.
        await maker.reconfigure(**changes)
    except ValidationError as exc:  # a combination the maker's config refuses
        raise ControlError(INVALID_CONFIG, str(exc), issues_from(exc)) from exc
    except ValueError as exc:
        raise ControlError(INVALID_VALUE, str(exc)) from exc
    except (MakerClientError, TimeoutError) as exc:  # told to go online, could not
        raise ControlError(UNREACHABLE, str(exc)) from exc


def start_request(
    config: FleetConfig,
    *,
    url: str,
    credentials: Mapping[str, list[str]],
    rpc_urls: Mapping[int, str],
    rng_seed: int,
    v1_keys: Mapping[str, Mapping[str, str]] | None,
) -> dict[str, Any]:
    """The `start` request's arguments. `rng_seed`: the seed of the stream the makers draw from
    (the simulator's RandomSource.fork(label).seed), so a fleet in a child process draws the
    numbers, Permit2 nonces among them, that it would draw in the simulator's process."""
    return {
        "config": config.model_dump(mode="json"),
        "url": url,
        "credentials": {name: list(keys) for name, keys in credentials.items()},
        "rpc_urls": {str(chain): rpc for chain, rpc in rpc_urls.items()},
        "rng_seed": rng_seed,
        "v1_keys": {name: dict(keys) for name, keys in (v1_keys or {}).items()},
    }


def fleet_from_start(args: Mapping[str, Any]) -> MakerFleet:
    """The fleet a `start` request describes (not started yet)."""
    try:
        return MakerFleet(
            FleetConfig.model_validate(args["config"]),
            url=str(args["url"]),
            credentials={str(k): list(v) for k, v in dict(args["credentials"]).items()},
            rpc_urls={int(k): str(v) for k, v in dict(args["rpc_urls"]).items()},
            rng=random.Random(int(args["rng_seed"])),
            v1_keys={str(k): dict(v) for k, v in dict(args.get("v1_keys") or {}).items()},
        )
    except (KeyError, TypeError, ValueError) as exc:  # ValidationError is a ValueError
        raise ControlError(FAILED, f"bad start request: {exc}") from exc
