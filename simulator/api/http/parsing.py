"""Request parsing at the edge: JSON bodies and query strings into pydantic models. Every failure
is an InvalidRequest (400 `invalid_request`) with `details.issues` naming the fields, or a
PayloadTooLarge (413) for bodies above the route's cap; nothing here can produce a 500."""

from __future__ import annotations

from typing import Any, Protocol, TypeVar

from aiohttp import web
from pydantic import BaseModel, ValidationError

from rfqkit.validation_issues import issues_from
from rfqkit.wire import WIRE_ONLY
from simulator.api.http.appkeys import SETTINGS
from simulator.errors import InvalidRequest, PayloadTooLarge
from simulator.services.access.proofs import TakerProof

ModelT = TypeVar("ModelT", bound=BaseModel)


def _is_json(content_type: str) -> bool:
    return content_type == "application/json" or content_type.endswith("+json")


async def parse_body(
    request: web.Request, model: type[ModelT], *, max_bytes: int | None = None
) -> ModelT:
    limit = max_bytes or request.app[SETTINGS].max_json_body_bytes
    if request.content_length is not None and request.content_length > limit:
        raise PayloadTooLarge(f"Request body exceeds {limit} bytes", details={"limit_bytes": limit})
    raw = await request.read()
    if len(raw) > limit:
        raise PayloadTooLarge(f"Request body exceeds {limit} bytes", details={"limit_bytes": limit})
    if not _is_json(request.content_type):
        raise InvalidRequest(
            "Content-Type must be application/json",
            details={"reason": "unsupported_media_type", "contentType": request.content_type},
        )
    try:
        return model.model_validate_json(raw or b"", **WIRE_ONLY)
    except ValidationError as exc:
        raise InvalidRequest(
            "Request body failed validation", details={"issues": issues_from(exc)}
        ) from exc


def parse_query(request: web.Request, model: type[ModelT]) -> ModelT:
    params: dict[str, Any] = {}
    for key in request.query:
        values = request.query.getall(key)
        params[key] = values[0] if len(values) == 1 else values
    try:
        return model.model_validate(params, **WIRE_ONLY)
    except ValidationError as exc:
        raise InvalidRequest(
            "Query failed validation", details={"issues": issues_from(exc)}
        ) from exc


class ProofFields(Protocol):
    """The TakerControl proof as a body carries it (RFQ `takerProof`, ramp `proof`)."""

    @property
    def nonce(self) -> str: ...  # 0x + 64 hex, checked by the schema

    @property
    def issued_at(self) -> int: ...

    @property
    def signature(self) -> str: ...  # 0x + hex, checked by the schema


def taker_proof(proof: ProofFields | None) -> TakerProof | None:
    """The proof's bytes for ProofService; None when the body sent none."""
    if proof is None:
        return None
    return TakerProof(
        nonce=bytes.fromhex(proof.nonce[2:]),
        issued_at_ms=proof.issued_at,
        signature=bytes.fromhex(proof.signature[2:]),
    )
