"""The table of every `rfqsim serve` setting in docs/configuration.md, generated from the
Settings model (the names), the defaults file (the values and each line's comment) and the flags
that set them, so the document cannot miss a setting (a test compares it with this output).

    python -m simulator.settings_table
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel

from simulator.settings import (
    DEFAULT_SETTINGS_FILE,
    ENV_NESTED_DELIMITER,
    ENV_PREFIX,
    Settings,
    load_settings,
)

# Flags of `rfqsim serve` that set a setting.
FLAGS: dict[str, str] = {
    "api.host": "`--host`",
    "api.port": "`--port`",
    "api.control_api": "`--no-control-api`",
    "api.allowed_hosts": "`--allowed-host NAME` (repeatable)",
    "rpc_cors": "`--rpc-cors`",
    "rpc_port": "`--rpc-port PORT`",
    "seed": "`--seed`",
    "environment": "`--environment`",
    "chains": "`--rpc-url CHAIN=URL`, `--rpc-port CHAIN=PORT`",
    "makers": "`--no-makers`",
    "makers_process": "`--makers-process`",
    "webhooks.allow_http": "`--allow-http-webhooks`",
    "ramp.provider_port": "`--provider-port`",
    "ramp.provider_url": "`--provider-url`",
    "ramp.smtp": "`--smtp`",
    "on_chain_exit": "`--on-chain-exit`",
    "state.dir": "`--state-dir`",
    "shared.redis_url": "`--redis-url URL`",
}
# Meanings of settings whose line in the defaults file has no comment.
MEANINGS: dict[str, str] = {
    "seed": "seed of ids, prices and latencies (demo keys derive from it)",
    "makers": "the simulated maker fleet (makers/config.py shape); null: no makers",
    "makers_process": "where the fleet runs: `own` (a child process, driven over a control "
    "channel) or `in` the simulator's process",
    "proof.window_s": "takerProof.issuedAt tolerance either side of the service clock",
    "proof.grant_s": "lifetime of a verified proof's grant (about 12 hours)",
    "corridor_defaults.mode": "RFQ or BOOK (BOOK corridors refuse /v2/rfq/request with 400)",
    "corridor_defaults.reply_budget_ms": "makers' reply budget per firm request",
    "corridor_defaults.quote_ttl_s": "a firm quote's lifetime (at most 60)",
    "corridor_defaults.preferred_wait_ms": "head start of preferred makers",
    "corridor_defaults.fee_bps": "venue fee in basis points",
    "webhooks.retry_schedule_s": "delay before each delivery attempt, from the end of the last",
    "webhooks.max_concurrent_per_endpoint": "delivery attempts in flight to one endpoint",
    "webhooks.max_endpoints_per_partner": "webhook endpoints one partner may register",
}
LEAF_MODELS: tuple[str, ...] = ("makers",)  # nested models documented as one JSON value


def _comments() -> dict[str, str]:
    """Dotted key -> the comment on its line of the defaults file."""
    comments: dict[str, str] = {}
    stack: list[tuple[int, str]] = []
    for line in DEFAULT_SETTINGS_FILE.read_text(encoding="utf-8").splitlines():
        match = re.match(r"^( *)([a-z_0-9]+):(.*)$", line)
        if not match:
            continue
        indent, key, rest = len(match.group(1)), match.group(2), match.group(3)
        while stack and stack[-1][0] >= indent:
            stack.pop()
        stack.append((indent, key))
        path = ".".join(k for _, k in stack)
        if "#" in rest:
            comments[path] = rest.split("#", 1)[1].strip()
    return comments


def _leaves(model: type[BaseModel], prefix: str = "") -> list[str]:
    paths: list[str] = []
    for name, field in model.model_fields.items():
        path = f"{prefix}{name}"
        annotation = field.annotation
        if (
            isinstance(annotation, type)
            and issubclass(annotation, BaseModel)
            and path not in LEAF_MODELS
        ):
            paths += _leaves(annotation, f"{path}.")
        else:
            paths.append(path)
    return paths


def _value(data: Any, path: str) -> Any:
    for part in path.split("."):
        data = data[part]
    return data


def _shown(value: Any) -> str:
    if isinstance(value, str) and value.startswith("the default fleet"):
        return value
    if isinstance(value, list | dict) and len(json.dumps(value)) > 40:
        return "see `simulator/default_settings.yaml`"
    return f"`{json.dumps(value)}`"


def env_name(path: str) -> str:
    return ENV_PREFIX + ENV_NESTED_DELIMITER.join(part.upper() for part in path.split("."))


def table() -> str:
    defaults = load_settings(environ={}).model_dump(mode="json")
    comments = _comments()
    lines = [
        "| setting (YAML) | environment variable | flag | default | meaning |",
        "|---|---|---|---|---|",
    ]
    defaults["makers"] = "the default fleet (`makers.config.default_fleet`)"
    for path in _leaves(Settings):
        meaning = MEANINGS.get(path) or comments.get(path, "")
        lines.append(
            f"| `{path}` | `{env_name(path)}` | {FLAGS.get(path, '')} "
            f"| {_shown(_value(defaults, path))} | {meaning.replace('|', '/')} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(table(), end="")
