"""One request and its answer as the proxy saw them (:class:`ProxiedExchange`), in the forms the
checks read: the answer as the conformance suite's own :class:`conformance.wire.client.Response` (so
its assertions run on it unchanged), each body parsed once, and what identifies the caller (an
API key, a claim token, the client's IP).
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from functools import cached_property
from typing import Any
from urllib.parse import parse_qsl

from conformance.wire.client import Headers, Response, parse_json
from rfqsim.proxy.spec import surface_of

KEY_HEADERS = ("Authorization", "X-API-Key")

JSON_TYPES = ("application/json", "+json")


def is_json_type(content_type: str | None) -> bool:
    """A JSON media type (application/json, application/problem+json, ...)."""
    media = (content_type or "").split(";", 1)[0].strip().lower()
    return media.startswith("application/") and media.endswith(JSON_TYPES)


@dataclass
class ProxiedExchange:
    """One HTTP exchange: the request as the client sent it, the answer as the upstream sent
    it (bodies kept only up to the proxy's check limit: ``*_complete`` says whether whole)."""

    method: str
    path: str
    query_string: str
    request_headers: Headers
    request_body: bytes
    client_ip: str
    started: float = field(default_factory=time.monotonic)  # monotonic, at the request
    wall: float = field(default_factory=time.time)  # Unix time at the request
    request_complete: bool = True
    status: int = 0
    reason: str = ""
    headers: Headers = field(default_factory=lambda: Headers(()))
    body: bytes = b""
    body_complete: bool = True
    finished: float = 0.0  # monotonic, at the answer's last byte

    def answer(
        self,
        status: int,
        reason: str,
        headers: Iterable[tuple[str, str]],
        body: bytes,
        *,
        complete: bool = True,
    ) -> None:
        self.status, self.reason = status, reason
        self.headers = Headers(headers)
        self.body, self.body_complete = body, complete
        self.finished = time.monotonic()

    # -- the request ------------------------------------------------------------------------

    @cached_property
    def surface(self) -> str:
        return surface_of(self.path)

    @cached_property
    def query(self) -> dict[str, str]:
        """The query's parameters (the last value of a repeated one)."""
        return dict(parse_qsl(self.query_string, keep_blank_values=True))

    @property
    def target(self) -> str:
        return f"{self.path}?{self.query_string}" if self.query_string else self.path

    @cached_property
    def request_json(self) -> tuple[Any, bool]:
        """(the request body parsed as JSON, whether it parsed)."""
        if not self.request_complete:
            return None, False
        return parse_json(self.request_body)

    @cached_property
    def api_key(self) -> str | None:
        """The API key presented (Bearer or X-API-Key), as sent."""
        bearer = self.request_headers.get("Authorization")
        if bearer is not None:
            scheme, _, value = bearer.partition(" ")
            if scheme.lower() == "bearer" and value.strip():
                return value.strip()
        header = self.request_headers.get("X-API-Key")
        return header.strip() if header is not None and header.strip() else None

    @property
    def keyed(self) -> bool:
        """Whether any API key header came with the request (well-formed or not)."""
        return any(name in self.request_headers for name in KEY_HEADERS)

    @property
    def caller(self) -> str:
        """Whose budget and ownership the request stands on: the key's public prefix, else the
        client's IP."""
        key = self.api_key
        return f"key:{key.split('.', 1)[0]}" if key else f"ip:{self.client_ip}"

    # -- the answer -------------------------------------------------------------------------

    @cached_property
    def decoded_body(self) -> bytes | None:
        """The answer's body with its Content-Encoding undone (gzip, deflate); None when it
        cannot be (another encoding, or a body cut at the check limit)."""
        if not self.body_complete:
            return None
        encoding = (self.headers.get("Content-Encoding") or "identity").strip().lower()
        if encoding == "identity":
            return self.body
        if encoding in ("gzip", "x-gzip", "deflate"):
            try:
                wbits = 16 + zlib.MAX_WBITS if "gzip" in encoding else zlib.MAX_WBITS
                return zlib.decompress(self.body, wbits)
            except zlib.error:
                return None
        return None

    @cached_property
    def response(self) -> Response:
        """The answer as the conformance suite's client would have read it."""
        raw = self.decoded_body
        parsed, is_json = parse_json(raw) if raw is not None else (None, False)
        return Response(
            method=self.method,
            url=self.target,
            status=self.status,
            headers=self.headers,
            raw=raw if raw is not None else b"",
            body=parsed,
            is_json=is_json,
            elapsed=max(0.0, self.finished - self.started),
        )

    @property
    def json(self) -> Any:
        return self.response.body if self.response.is_json else None

    @property
    def data(self) -> Any:
        """``data`` of a ``{data: ...}`` answer, else None."""
        body = self.json
        return body.get("data") if isinstance(body, Mapping) else None

    @property
    def readable(self) -> bool:
        """Whether the whole answer body is at hand for body checks."""
        return self.decoded_body is not None

    @property
    def request_id(self) -> str | None:
        return self.headers.get("X-Request-Id")

    @cached_property
    def date(self) -> float | None:
        """The answer's ``Date`` header as Unix time (one-second resolution), if any."""
        value = self.headers.get("Date")
        if not value:
            return None
        try:
            return parsedate_to_datetime(value).timestamp()
        except (TypeError, ValueError):
            return None
