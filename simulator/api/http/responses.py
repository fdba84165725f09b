"""Rendering of success bodies: `{"data": ...}` from pydantic models, with exact JSON."""

from __future__ import annotations

from typing import Any

from aiohttp import web
from pydantic import BaseModel

from simulator.api.http.schemas import ApiModel

JSON = "application/json"


def data_response(
    model: BaseModel, *, status: int = 200, exclude_none: bool = False
) -> web.Response:
    body = model.model_dump_json(by_alias=True, exclude_none=exclude_none)
    return web.Response(body=b'{"data":' + body.encode() + b"}", status=status, content_type=JSON)


def raw_json_response(body: bytes, *, status: int = 200) -> web.Response:
    return web.Response(body=body, status=status, content_type=JSON)


def body_response(
    model: BaseModel, *, status: int = 200, exclude_none: bool = False
) -> web.Response:
    """A success body that is the model itself, not wrapped in `data` (the ramp: RA1)."""
    body = model.model_dump_json(by_alias=True, exclude_none=exclude_none)
    return web.Response(body=body.encode(), status=status, content_type=JSON)


class Joined:
    """Several service objects read as one by a response model validated from attributes
    (`LimitOrderRecord.model_validate(Joined(order, status))`): the first part that has an
    attribute answers for it."""

    def __init__(self, *parts: object) -> None:
        self._parts = parts

    def __getattr__(self, name: str) -> Any:
        for part in self._parts:
            if hasattr(part, name):
                return getattr(part, name)
        raise AttributeError(name)


def event_body(
    model: type[ApiModel], event_type: str, subject_id: str, created: float, data: object
) -> dict[str, Any]:
    """A webhook event's body as JSON: `{id: "<type>:<subject id>", type, created, data}`, the
    envelope every area's events share (spec 1 and 3 "Events"), checked by the event's model."""
    event = model.model_validate(
        {"id": f"{event_type}:{subject_id}", "type": event_type, "created": created, "data": data}
    )
    return event.model_dump(mode="json")
