"""What a mutation is and the rewrites the catalogue (:mod:`conformance.mutants.catalogue`)
is made of.

A mutation sees one whole exchange (:class:`Exchange`: the request as sent, the answer as the
service gave it) and rewrites the answer in place when :meth:`Mutation.applies`. Each names the
spec statement it breaks and the test modules expected to notice (``modules``), which bound
how much of the suite a mutation run executes.

A WebSocket (the maker stream) is no exchange: the proxy relays its frames one by one, and a
mutation with a :attr:`Mutation.rewrite_frame` sees each text frame as it passes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from multidict import CIMultiDict

RFQ_ID_PATH = re.compile(r"^/v2/rfq/rfq_[^/]+$")


@dataclass
class Exchange:
    """One request and the service's answer, which a mutation may rewrite."""

    method: str
    path: str
    query: dict[str, str]
    request_headers: CIMultiDict[str]
    request_body: bytes
    status: int
    headers: CIMultiDict[str]
    body: bytes

    def json(self) -> Any:
        try:
            return json.loads(self.body)
        except ValueError:
            return None

    def set_json(self, value: Any) -> None:
        self.body = json.dumps(value).encode()

    def data(self) -> Any:
        body = self.json()
        return body.get("data") if isinstance(body, dict) else None

    def error_code(self) -> str | None:
        body = self.json()
        error = body.get("error") if isinstance(body, dict) else None
        return str(error.get("code")) if isinstance(error, dict) else None

    def is_api(self) -> bool:
        return self.path.startswith(("/v1/", "/v2/"))


Predicate = Callable[[Exchange], bool]
Rewrite = Callable[[Exchange], None]
# Which way a WebSocket frame goes: from the service to the client, or from the client to it.
DOWN, UP = "down", "up"
# A text frame going ``direction`` -> the text to relay instead, or None: the service closes
# the connection there (code CLOSE_POLICY), and neither that frame nor any later one passes.
FrameRewrite = Callable[[str, str], str | None]
CLOSE_POLICY = 1008  # RFC 6455 7.4.1: policy violation, what a server refusing a peer sends


@dataclass
class Mutation:
    name: str
    breaks: str  # the spec statement (or rule id) the mutation violates
    applies: Predicate
    apply: Rewrite
    modules: tuple[str, ...]  # test modules (in conformance/tests) expected to catch it
    # A change the spec allows (lowercase addresses, an extra field): the suite must NOT fail.
    equivalent: bool = False
    state: dict[str, Any] = field(default_factory=dict)  # per-run memory (ramp statuses)
    # Its frames, for a mutation of a WebSocket; HTTP exchanges are left to applies/apply.
    rewrite_frame: FrameRewrite | None = None
    # The area it is scored in; None: the area of its first module (conformance/wire/areas.py).
    area: str | None = None


# -- building blocks (used by the catalogue) ---------------------------------------------


def never(ex: Exchange) -> bool:
    """For a mutation of WebSocket frames only: no HTTP exchange is touched."""
    return False


def leave(ex: Exchange) -> None:
    """The rewrite of a mutation that never applies to an exchange."""


def rewrite_data(change: Callable[[dict[str, Any]], None]) -> Rewrite:
    def rewrite(ex: Exchange) -> None:
        body = ex.json()
        if isinstance(body, dict) and isinstance(body.get("data"), dict):
            change(body["data"])
            ex.set_json(body)

    return rewrite


def rewrite_error(change: Callable[[dict[str, Any]], None]) -> Rewrite:
    def rewrite(ex: Exchange) -> None:
        body = ex.json()
        if isinstance(body, dict) and isinstance(body.get("error"), dict):
            change(body["error"])
            ex.set_json(body)

    return rewrite


def recode(status: int, code: str) -> Rewrite:
    def rewrite(ex: Exchange) -> None:
        ex.status = status
        rewrite_error(lambda error: error.__setitem__("code", code))(ex)

    return rewrite


def drop_header(name: str) -> Rewrite:
    def rewrite(ex: Exchange) -> None:
        ex.headers.popall(name, None)

    return rewrite


def firm(ex: Exchange) -> bool:
    data = ex.data()
    return (
        ex.method == "POST"
        and ex.path == "/v2/rfq/request"
        and ex.status == 200
        and isinstance(data, dict)
        and data.get("status") == "quoted"
    )


def no_quote(ex: Exchange) -> bool:
    data = ex.data()
    return (
        ex.path in ("/v2/rfq/request", "/v2/rfq/preview")
        and ex.status == 200
        and isinstance(data, dict)
        and data.get("status") == "no_quote"
    )


def error_answer(status: int, code: str | None = None) -> Predicate:
    return lambda ex: ex.status == status and (code is None or ex.error_code() == code)


def in_quote(change: Callable[[dict[str, Any]], None]) -> Callable[[dict[str, Any]], None]:
    return lambda data: change(data["quote"])


def record_status(ex: Exchange) -> bool:
    return ex.method == "GET" and bool(RFQ_ID_PATH.match(ex.path)) and ex.status == 200


def set_status_and_data(status: int, data: Any) -> Rewrite:
    """Answer ``status`` with ``{"data": data}`` instead."""

    def rewrite(ex: Exchange) -> None:
        ex.status = status
        ex.set_json({"data": data})

    return rewrite
