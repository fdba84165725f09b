"""Explicit OpenAPI links, added to the loaded document so schemathesis' stateful phase can chain
operations the way an integrator does.

The simulator's ``/v2/openapi.json`` declares no links (the real service's document may not
either), so the harness adds them to its own copy after loading it by URL; the service's document
is never edited. Every link names operations by ``operationId``: a renamed operation makes
:func:`add_links` fail loudly instead of silently dropping a chain.

Chains:

* ``POST /v2/rfq/request`` (200, firm quote *or* no-quote: both carry ``rfqId`` and
  ``claimToken``) → ``GET /v2/rfq/{rfq_id}``, ``POST …/cancel``, ``POST …/submit``, with the
  claim token in ``X-Rfq-Claim`` (spec "Claim token": sent on cancel, submit and status);
* ``POST /v1/webhooks`` (201) → ``DELETE /v1/webhooks/{endpoint_id}``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

CLAIM_HEADER = "X-Rfq-Claim"


@dataclass(frozen=True)
class Link:
    """One OpenAPI link: ``source`` answering ``status`` feeds ``target``."""

    name: str  # link name inside the source response's `links` map
    source: str  # operationId of the operation whose response is read
    status: str  # response status code (as in the document: "200")
    target: str  # operationId of the operation to call next
    parameters: Mapping[str, str] = field(default_factory=dict)  # "<in>.<name>" -> expression
    description: str = ""

    def as_openapi(self) -> dict[str, Any]:
        spec: dict[str, Any] = {"operationId": self.target, "parameters": dict(self.parameters)}
        if self.description:
            spec["description"] = self.description
        return spec


_RFQ_OWNERSHIP = {
    "path.rfq_id": "$response.body#/data/rfqId",
    f"header.{CLAIM_HEADER}": "$response.body#/data/claimToken",
}

LINKS: tuple[Link, ...] = (
    Link(
        "GetRfq",
        "rfqRequest",
        "200",
        "rfqGet",
        _RFQ_OWNERSHIP,
        "Status of the RFQ just requested, proven by its claim token",
    ),
    Link(
        "CancelRfq",
        "rfqRequest",
        "200",
        "rfqCancel",
        _RFQ_OWNERSHIP,
        "Give the quote back",
    ),
    Link(
        "SubmitRfq",
        "rfqRequest",
        "200",
        "rfqSubmit",
        _RFQ_OWNERSHIP,
        "Report a (generated) swap transaction hash",
    ),
    Link(
        "DeleteWebhook",
        "webhooksCreate",
        "201",
        "webhooksDelete",
        {"path.endpoint_id": "$response.body#/data/id"},
        "Remove the endpoint just registered",
    ),
)


class LinkError(ValueError):
    """The document does not have an operation or response a link needs."""


def operations_by_id(document: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """``{operationId: operation object}`` of every operation in the document."""
    found: dict[str, dict[str, Any]] = {}
    for path_item in (document.get("paths") or {}).values():
        if not isinstance(path_item, dict):
            continue
        for operation in path_item.values():
            if isinstance(operation, dict) and isinstance(operation.get("operationId"), str):
                found[operation["operationId"]] = operation
    return found


def operation_labels(document: Mapping[str, Any]) -> dict[str, str]:
    """``{"POST /v2/rfq/request": "rfqRequest", …}``: schemathesis labels to operationIds."""
    labels: dict[str, str] = {}
    for path, path_item in (document.get("paths") or {}).items():
        if not isinstance(path_item, dict):
            continue
        for method, operation in path_item.items():
            if isinstance(operation, dict) and isinstance(operation.get("operationId"), str):
                labels[f"{method.upper()} {path}"] = operation["operationId"]
    return labels


def add_links(document: dict[str, Any], links: tuple[Link, ...] = LINKS) -> list[str]:
    """Add ``links`` to the document in place; returns ``"source -> target"`` of each.

    Raises :class:`LinkError` when an operation or the source response is missing, or when the
    document already defines a link of the same name with a different definition.
    """
    operations = operations_by_id(document)
    added: list[str] = []
    for link in links:
        for operation_id in (link.source, link.target):
            if operation_id not in operations:
                raise LinkError(f"link {link.name}: no operation {operation_id!r} in the document")
        responses = operations[link.source].get("responses") or {}
        response = responses.get(link.status)
        if not isinstance(response, dict):
            raise LinkError(
                f"link {link.name}: {link.source} declares no {link.status} response to read"
            )
        if "$ref" in response:
            raise LinkError(f"link {link.name}: {link.source} {link.status} is a $ref")
        existing = response.setdefault("links", {})
        definition = link.as_openapi()
        if link.name in existing and existing[link.name] != definition:
            raise LinkError(f"link {link.name}: the document already defines it differently")
        existing[link.name] = definition
        added.append(f"{link.source} -> {link.target}")
    return added
