"""The schemathesis side of one pass: :func:`build_config` turns the run's settings and caller into
a ``SchemathesisConfig`` (seed, phases, checks, the operations selected, dictionaries that steer
most generated values to the service's chains, tokens, taker and sizes, and the API key for keyed
passes); :func:`load_schema` loads one of the target's documents by URL (the v2 one with the
harness' explicit links added), and :func:`explicit_links_resolved` says which of those links
schemathesis made into transitions; :func:`check_names` lists every check a run enables.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import schemathesis
from schemathesis.checks import CHECKS, load_all_checks
from schemathesis.config import SchemathesisConfig
from schemathesis.specs.openapi.stateful import collect_transitions

from conformance.schema.auth import RunCredentials
from conformance.schema.checks import REQUEST_ID_CHECK
from conformance.schema.links import LINKS, add_links
from conformance.schema.results import RunError
from conformance.schema.settings import (
    ALL_PHASES,
    MAX_RESPONSE_TIME_S,
    OPENAPI_PATH,
    RICH_FACTOR,
    RICH_OPERATIONS,
    STATEFUL_FACTOR,
    RunSettings,
)


def check_names() -> list[str]:
    """Every check the run enables: the built-in ones and ours (registered on import)."""
    load_all_checks()
    names = sorted({*CHECKS.get_all_names(), "max_response_time"})
    if REQUEST_ID_CHECK not in names:
        raise RunError(f"the {REQUEST_ID_CHECK} check is not registered")
    return names


def _dictionaries(
    caller: RunCredentials, pairs: list[Mapping[str, str]]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """schemathesis dictionaries and parameter bindings steering a share of generated values to
    ones the service serves: its chains, corridor tokens, the run's taker, sane sizes, and the
    feed's ticker ids and symbols."""
    values: dict[str, list[Any]] = {
        "chains": list(caller.chain_ids),
        "tokens": caller.tokens(),
        "takers": [caller.taker.address],
        "amounts": caller.amounts(),
        "webhook_urls": [caller.webhook_url],
        "ticker_ids": [p["ticker_id"] for p in pairs],
        "bases": sorted({p["base"] for p in pairs}),
        "targets": sorted({p["target"] for p in pairs}),
    }
    # Probabilities: most draws reach real paths, the rest stay arbitrary (and meet the
    # service's own 400s, which the deviations file accounts for).
    bindings = {
        "query.chainId": ("chains", 0.9),
        "body.chainId": ("chains", 0.9),
        "body.sellToken": ("tokens", 0.9),
        "body.buyToken": ("tokens", 0.9),
        "body.taker": ("takers", 0.9),
        "body.sellAmount": ("amounts", 0.8),
        "body.buyAmount": ("amounts", 0.8),
        "body.url": ("webhook_urls", 0.8),
        "query.ticker_id": ("ticker_ids", 0.8),
        "query.base": ("bases", 0.6),
        "query.target": ("targets", 0.6),
    }
    dictionaries = {name: {"values": v} for name, v in values.items() if v}
    parameters = {
        key: {"dictionary": name, "probability": p}
        for key, (name, p) in bindings.items()
        if name in dictionaries
    }
    return dictionaries, parameters


def build_config(
    base_url: str,
    caller: RunCredentials,
    settings: RunSettings,
    *,
    keyed: bool,
    phases: tuple[str, ...] = ALL_PHASES,
    operations: tuple[str, ...] | None = None,
    pairs: list[Mapping[str, str]] | None = None,
) -> SchemathesisConfig:
    """The schemathesis configuration of one pass (``operations``: operationIds to test, all
    when None; ``pairs``: the feed's pairs, to steer its query parameters)."""
    dictionaries, parameters = _dictionaries(caller, pairs or [])
    selection: list[dict[str, Any]] = [
        {
            "include-operation-id": list(RICH_OPERATIONS),
            "generation": {"max-examples": settings.max_examples * RICH_FACTOR},
        }
    ]
    if operations is not None:
        # Deselect the rest through the config: an `[[operations]]` entry plus
        # `schema.include()` would select everything (schemathesis ORs the two).
        selection.append({"exclude-operation-id": list(operations), "enabled": False})
    project: dict[str, Any] = {
        "seed": settings.seed,
        "base-url": base_url,
        "workers": 1,
        "continue-on-failure": True,
        "request-timeout": settings.request_timeout,
        "cache": {"enabled": False},
        "generation": {
            "mode": "all",
            "max-examples": settings.max_examples,
            "database": "none",
            # Keyless: no generated Authorization / X-API-Key / X-Rfq-Claim headers; a
            # wallet app sends none (the claim token comes from the links).
            "with-security-parameters": keyed,
        },
        "checks": {
            "enabled": True,
            "max_response_time": MAX_RESPONSE_TIME_S,
        },
        "phases": {
            "examples": {"enabled": "examples" in phases},
            "coverage": {"enabled": "coverage" in phases},
            "fuzzing": {"enabled": "fuzzing" in phases},
            "stateful": {
                "enabled": "stateful" in phases,
                "max-steps": settings.stateful_steps,
                # Scenarios are what reach the chained operations: give them more draws.
                "generation": {"max-examples": settings.max_examples * STATEFUL_FACTOR},
                # Only the explicit links of links.py: inferred ones would make
                # POST /v2/rfq/{id}/submit a root and spend the budget on random ids.
                "inference": {"algorithms": []},
            },
        },
        "operations": selection,
        # An unconstrained string path parameter (`{rfq_id}`) with no security parameters to
        # mutate leaves negative generation almost nothing to draw: hypothesis' filter_too_much
        # health check is about the generator, not about the service.
        "suppress-health-check": ["filter_too_much"],
        "warnings": False,
    }
    if dictionaries:
        project["dictionaries"] = dictionaries
        project["parameters"] = parameters
    if settings.rate_limit:
        project["rate-limit"] = settings.rate_limit
    if keyed and caller.api_key:
        project["auth"] = {
            "openapi": {
                "bearerKey": {"bearer": caller.api_key},
                "apiKeyHeader": {"api_key": caller.api_key},
            }
        }
    return SchemathesisConfig.from_dict(project)


def load_schema(base_url: str, config: SchemathesisConfig, document: str = OPENAPI_PATH) -> Any:
    """The target's document, loaded by URL without credentials, with the harness' links (the
    v2 document's: the feed's has nothing to chain)."""
    try:
        schema = schemathesis.openapi.from_url(f"{base_url}{document}", config=config)
    except Exception as exc:
        raise RunError(f"cannot load {base_url}{document}: {exc}") from exc
    if document == OPENAPI_PATH:
        add_links(schema.raw_schema)
    return schema


def explicit_links_resolved(schema: Any) -> list[str]:
    """Names of the harness' links schemathesis resolved into transitions (raises if invalid)."""
    operations = [result.ok() for result in schema.get_all_operations()]
    transitions = collect_transitions(operations)
    ours = {link.name for link in LINKS}
    return sorted(
        {
            link.name
            for entry in transitions.operations.values()
            for link in entry.outgoing
            if link.name in ours
        }
    )
