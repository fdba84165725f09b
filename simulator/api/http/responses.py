"""Rendering of success bodies: `{"data": ...}` from pydantic models, with exact JSON."""

from __future__ import annotations

from aiohttp import web
from pydantic import BaseModel

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
