"""Black-box helpers: plain HTTP, the error envelope, chain JSON-RPC and the /_sim control API.

Only the standard library is used for HTTP (``http.client``), so the helpers work the same
inside pytest, under xdist and in an integrator's own scripts, and every byte that went over
the wire is available to assertions (status, raw headers, raw body). Nothing here imports the
simulator.
"""

from __future__ import annotations

import contextlib
import http.client
import ipaddress
import itertools
import json as jsonlib
import os
import re
import ssl
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlencode, urlsplit

DEFAULT_TIMEOUT = 30.0
_ISO_UTC = re.compile(
    r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,9})?(Z|\+00:00)$"
)
_REQUEST_ID_HEADER = "X-Request-Id"


class Headers:
    """Response headers: case-insensitive lookup, repeated headers kept in order."""

    def __init__(self, items: Iterable[tuple[str, str]]) -> None:
        self._items = list(items)

    def get(self, name: str, default: str | None = None) -> str | None:
        lowered = name.lower()
        for key, value in self._items:
            if key.lower() == lowered:
                return value
        return default

    def get_all(self, name: str) -> list[str]:
        lowered = name.lower()
        return [value for key, value in self._items if key.lower() == lowered]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None

    def __getitem__(self, name: str) -> str:
        value = self.get(name)
        if value is None:
            raise KeyError(name)
        return value

    def items(self) -> list[tuple[str, str]]:
        return list(self._items)

    def __repr__(self) -> str:
        return f"Headers({self._items!r})"


_NOT_JSON = object()


@dataclass(frozen=True)
class Response:
    """One HTTP exchange as seen by the caller."""

    method: str
    url: str
    status: int
    headers: Headers
    raw: bytes  # body bytes exactly as received
    body: Any  # parsed JSON, or None when the body is empty or not JSON
    is_json: bool  # whether the body parsed as JSON
    elapsed: float  # seconds from sending to the last body byte

    @property
    def request_id(self) -> str | None:
        return self.headers.get(_REQUEST_ID_HEADER)

    def json(self) -> Any:
        """The parsed body; fails the test when the body is not JSON."""
        assert self.is_json, f"{self.describe()}: body is not JSON: {self.raw[:200]!r}"
        return self.body

    def describe(self) -> str:
        return f"{self.method} {self.url} -> {self.status}"

    def __repr__(self) -> str:
        return f"<Response {self.describe()} {self.raw[:300]!r}>"


def _parse_json(raw: bytes) -> tuple[Any, bool]:
    if not raw.strip():
        return None, False
    try:
        return jsonlib.loads(raw), True
    except (ValueError, UnicodeDecodeError):
        return None, False


def request(
    method: str,
    url: str,
    *,
    json: Any = _NOT_JSON,
    data: bytes | str | None = None,
    headers: Mapping[str, str] | None = None,
    params: Mapping[str, Any] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    ssl_context: ssl.SSLContext | None = None,
    source_address: tuple[str, int] | None = None,
) -> Response:
    """Send one request and read the whole response; never raises on an HTTP status.

    ``json`` serializes a body and sets ``Content-Type: application/json`` (unless given);
    ``data`` sends bytes as they are, for malformed-body tests. ``source_address`` binds the
    local end of the connection (``("127.0.0.3", 0)``), so a test on loopback can appear to
    the service as another client IP.
    """
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"not an http(s) URL: {url!r}")
    send_headers = {"Accept": "application/json", "User-Agent": "rfqsim-conformance"}
    body: bytes | None = None
    if json is not _NOT_JSON:
        body = jsonlib.dumps(json).encode()
        send_headers["Content-Type"] = "application/json"
    elif data is not None:
        body = data.encode() if isinstance(data, str) else data
    send_headers.update(headers or {})
    target = parts.path or "/"
    query = parts.query
    if params:
        extra = urlencode({k: v for k, v in params.items() if v is not None}, doseq=True)
        query = f"{query}&{extra}" if query else extra
    if query:
        target = f"{target}?{query}"
    connection: http.client.HTTPConnection
    if parts.scheme == "https":
        connection = http.client.HTTPSConnection(
            parts.hostname,
            parts.port,
            timeout=timeout,
            context=ssl_context,
            source_address=source_address,
        )
    else:
        connection = http.client.HTTPConnection(
            parts.hostname, parts.port, timeout=timeout, source_address=source_address
        )
    started = time.monotonic()
    try:
        # A server may answer (413) and stop reading before a large body is sent;
        # its response can still be waiting in the socket.
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            connection.request(method, target, body=body, headers=send_headers)
        reply = connection.getresponse()
        raw = reply.read()
        status, header_items = reply.status, reply.getheaders()
    finally:
        connection.close()
    elapsed = time.monotonic() - started
    parsed, is_json = _parse_json(raw)
    return Response(
        method=method,
        url=url,
        status=status,
        headers=Headers(header_items),
        raw=raw,
        body=parsed,
        is_json=is_json,
        elapsed=elapsed,
    )


class Client:
    """Requests relative to one base URL (``http://127.0.0.1:8080``)."""

    def __init__(
        self,
        base_url: str,
        *,
        headers: Mapping[str, str] | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        ssl_context: ssl.SSLContext | None = None,
        source_address: tuple[str, int] | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.headers = dict(headers or {})
        self.timeout = timeout
        self.ssl_context = ssl_context
        self.source_address = source_address

    def url(self, path: str) -> str:
        return path if "://" in path else f"{self.base_url}/{path.lstrip('/')}"

    def request(
        self,
        method: str,
        path: str,
        *,
        json: Any = _NOT_JSON,
        data: bytes | str | None = None,
        headers: Mapping[str, str] | None = None,
        params: Mapping[str, Any] | None = None,
        timeout: float | None = None,
    ) -> Response:
        return request(
            method,
            self.url(path),
            json=json,
            data=data,
            headers={**self.headers, **(headers or {})},
            params=params,
            timeout=self.timeout if timeout is None else timeout,
            ssl_context=self.ssl_context,
            source_address=self.source_address,
        )

    def get(self, path: str, **kwargs: Any) -> Response:
        return self.request("GET", path, **kwargs)

    def post(self, path: str, **kwargs: Any) -> Response:
        return self.request("POST", path, **kwargs)

    def delete(self, path: str, **kwargs: Any) -> Response:
        return self.request("DELETE", path, **kwargs)

    def with_headers(self, headers: Mapping[str, str]) -> Client:
        """A client sending these headers as well (an API key, a claim token)."""
        return Client(
            self.base_url,
            headers={**self.headers, **headers},
            timeout=self.timeout,
            ssl_context=self.ssl_context,
            source_address=self.source_address,
        )

    def from_address(self, host: str) -> Client:
        """A client whose connections leave from this local address (``"127.0.0.3"``).

        On loopback every 127.0.0.0/8 address reaches the service, which then sees a different
        client IP: per-IP limits, grants and claims can be tested without disturbing others.
        """
        return Client(
            self.base_url,
            headers=self.headers,
            timeout=self.timeout,
            ssl_context=self.ssl_context,
            source_address=(host, 0),
        )


# -- client addresses ------------------------------------------------------------------

_LOOPBACK_SEQUENCE = itertools.count()


def is_loopback_url(url: str) -> bool:
    """Whether the URL's host is an IPv4 loopback address (``127.0.0.0/8``).

    Only then can a test choose its client IP with :meth:`Client.from_address`.
    """
    try:
        address = ipaddress.ip_address(urlsplit(url).hostname or "")
    except ValueError:
        return False
    return address.version == 4 and address.is_loopback


def fresh_loopback_address() -> str:
    """A loopback address no earlier call in this process returned: ``127.<77+w>.<hi>.<lo>``.

    ``w`` is the pytest-xdist worker number (``PYTEST_XDIST_WORKER=gw3`` -> 3, else 0), so
    workers sharing one service do not share addresses either. Tests that exercise per-IP
    behaviour (keyless limits, grants, the IP backstop) each take their own address.
    """
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw")
    second = 77 + (int(worker) % 150 if worker.isdigit() else 0)
    index = next(_LOOPBACK_SEQUENCE)
    high, low = divmod(index, 254)
    return f"127.{second}.{high % 256}.{low + 1}"


# -- assertions --------------------------------------------------------------------------


def assert_request_id(resp: Response) -> str:
    """The response carries a non-empty ``X-Request-Id``; returns it."""
    values = resp.headers.get_all(_REQUEST_ID_HEADER)
    assert len(values) == 1, f"{resp.describe()}: expected one X-Request-Id header, got {values!r}"
    assert values[0].strip(), f"{resp.describe()}: empty X-Request-Id"
    return values[0]


def assert_json_content_type(resp: Response) -> None:
    content_type = (resp.headers.get("Content-Type") or "").split(";", 1)[0].strip().lower()
    assert content_type == "application/json", (
        f"{resp.describe()}: Content-Type {resp.headers.get('Content-Type')!r}, "
        "expected application/json"
    )


def assert_data(resp: Response, status: int = 200) -> Any:
    """A success: the expected status and a JSON object body ``{data: ...}``; returns data."""
    assert resp.status == status, f"{resp.describe()}: expected {status}: {resp.raw[:500]!r}"
    assert_request_id(resp)
    body = resp.json()
    assert isinstance(body, dict), f"{resp.describe()}: body is not an object: {body!r}"
    assert "data" in body, f"{resp.describe()}: success body lacks 'data': {body!r}"
    assert "error" not in body, f"{resp.describe()}: success body carries 'error': {body!r}"
    return body["data"]


def assert_error(
    resp: Response, status: int, code: str, reason: str | None = None
) -> dict[str, Any]:
    """The spec's error envelope with this status and code; returns the ``error`` object.

    Checks ``{error: {code, message, request_id, details?}}``, that ``request_id`` equals the
    ``X-Request-Id`` header and, when ``reason`` is given, that ``details.reason`` equals it.
    """
    assert resp.status == status, f"{resp.describe()}: expected {status} {code}: {resp.raw[:500]!r}"
    header_id = assert_request_id(resp)
    body = resp.json()
    assert isinstance(body, dict), f"{resp.describe()}: error body is not an object: {body!r}"
    assert "data" not in body, f"{resp.describe()}: error body carries 'data': {body!r}"
    error = body.get("error")
    assert isinstance(error, dict), f"{resp.describe()}: no error object: {body!r}"
    assert error.get("code") == code, (
        f"{resp.describe()}: error.code {error.get('code')!r}, expected {code!r}"
    )
    message = error.get("message")
    assert isinstance(message, str), f"{resp.describe()}: message is not a string: {message!r}"
    assert message, f"{resp.describe()}: empty error message"
    assert error.get("request_id") == header_id, (
        f"{resp.describe()}: error.request_id {error.get('request_id')!r} "
        f"!= X-Request-Id {header_id!r}"
    )
    details = error.get("details")
    assert details is None or isinstance(details, dict), (
        f"{resp.describe()}: details must be an object when present: {details!r}"
    )
    if reason is not None:
        got = (details or {}).get("reason")
        assert got == reason, f"{resp.describe()}: details.reason {got!r}, expected {reason!r}"
    return error


RATE_LIMIT_HEADERS = ("X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset")


def assert_rate_limit_headers(resp: Response) -> tuple[int, int, int]:
    """The per-key limiter's headers are present, once each, as non-negative integers.

    Returns ``(limit, remaining, reset_seconds)``; checks ``remaining <= limit``.
    """
    values: list[int] = []
    for name in RATE_LIMIT_HEADERS:
        got = resp.headers.get_all(name)
        assert len(got) == 1, f"{resp.describe()}: expected one {name} header, got {got!r}"
        assert got[0].strip().isdigit(), f"{resp.describe()}: {name} is {got[0]!r}"
        values.append(int(got[0]))
    limit, remaining, reset = values
    assert remaining <= limit, f"{resp.describe()}: remaining {remaining} > limit {limit}"
    return limit, remaining, reset


def assert_no_rate_limit_headers(resp: Response) -> None:
    """None of the X-RateLimit-* headers is present (the response was not rate-accounted)."""
    present = [name for name in RATE_LIMIT_HEADERS if name in resp.headers]
    assert not present, f"{resp.describe()}: unexpected {present}: {resp.headers!r}"


def assert_retry_after(resp: Response, at_most: int = 60) -> int:
    """``Retry-After`` is one delay in whole seconds, 1..``at_most``; returns it."""
    got = resp.headers.get_all("Retry-After")
    assert len(got) == 1, f"{resp.describe()}: expected one Retry-After header, got {got!r}"
    assert got[0].strip().isdigit(), f"{resp.describe()}: Retry-After is {got[0]!r}"
    seconds = int(got[0])
    assert 1 <= seconds <= at_most, f"{resp.describe()}: Retry-After {seconds}"
    return seconds


def issue_names_field(issue: Any, field_name: str) -> bool:
    """Whether one ``details.issues`` item points at ``field_name`` (path, loc, field, ...)."""
    if not isinstance(issue, dict):
        return False
    for key in ("path", "loc", "field", "name", "pointer", "param"):
        value = issue.get(key)
        if isinstance(value, str) and re.search(rf"(^|[^A-Za-z0-9_]){field_name}$", value):
            return True
        if isinstance(value, list) and field_name in [str(part) for part in value]:
            return True
    return False


def assert_issues(error: Mapping[str, Any], *field_names: str) -> list[Any]:
    """``details.issues`` is a non-empty array and names every given field; returns it."""
    details = error.get("details") or {}
    issues = details.get("issues") if isinstance(details, dict) else None
    assert isinstance(issues, list), f"details.issues is not an array: {error!r}"
    assert issues, f"details.issues is empty: {error!r}"
    for name in field_names:
        assert any(issue_names_field(issue, name) for issue in issues), (
            f"no issue names field {name!r}: {issues!r}"
        )
    return issues


def parse_iso_utc(value: Any) -> datetime:
    """Parse an ISO-8601 UTC timestamp (``Z`` or ``+00:00``); fails on anything else."""
    assert isinstance(value, str), f"timestamp is not a string: {value!r}"
    assert _ISO_UTC.match(value), f"not an ISO-8601 UTC time: {value!r}"
    text = value.replace("Z", "+00:00")
    # fromisoformat accepts at most microseconds; trim longer fractions.
    text = re.sub(r"(\.[0-9]{6})[0-9]+", r"\1", text)
    parsed = datetime.fromisoformat(text)
    assert parsed.utcoffset() == UTC.utcoffset(None), value
    return parsed


# -- chain JSON-RPC ----------------------------------------------------------------------


class RpcError(Exception):
    """A JSON-RPC error object, or a transport failure talking to the node."""

    def __init__(self, method: str, error: Any) -> None:
        super().__init__(f"{method}: {error!r}")
        self.method = method
        self.error = error


def rpc(url: str, method: str, params: list[Any] | None = None, *, timeout: float = 30.0) -> Any:
    """Call one JSON-RPC method on a chain node and return ``result``."""
    payload = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params or []}
    resp = request("POST", url, json=payload, timeout=timeout)
    if resp.status != 200 or not resp.is_json or not isinstance(resp.body, dict):
        raise RpcError(method, f"HTTP {resp.status}: {resp.raw[:300]!r}")
    if resp.body.get("error") is not None:
        raise RpcError(method, resp.body["error"])
    return resp.body.get("result")


def hex_to_int(value: Any) -> int:
    assert isinstance(value, str), f"not a hex quantity: {value!r}"
    assert value.startswith("0x"), f"not a hex quantity: {value!r}"
    return int(value, 16)


# -- simulator control API ---------------------------------------------------------------


class SimControl:
    """The simulator's ``/_sim`` control API (not part of the real service)."""

    def __init__(self, client: Client) -> None:
        self.client = client

    def call(self, method: str, path: str, json: Any = _NOT_JSON) -> Any:
        """Call ``/_sim/<path>`` and return ``data``; fails the test on any error."""
        resp = self.client.request(method, "/_sim/" + path.lstrip("/"), json=json)
        assert 200 <= resp.status < 300, f"{resp.describe()}: {resp.raw[:500]!r}"
        body = resp.json()
        assert isinstance(body, dict), f"{resp.describe()}: {body!r}"
        assert "data" in body, f"{resp.describe()}: {body!r}"
        return body["data"]

    def info(self) -> dict[str, Any]:
        data = self.call("GET", "info")
        assert isinstance(data, dict)
        return data

    def clock(self) -> dict[str, Any]:
        data = self.call("GET", "clock")
        assert isinstance(data, dict)
        return data

    def advance(self, seconds: float) -> dict[str, Any]:
        data = self.call("POST", "clock/advance", {"seconds": seconds})
        assert isinstance(data, dict)
        return data

    def now_ms(self) -> int:
        """The service clock (which tests may have advanced) as Unix milliseconds."""
        now = parse_iso_utc(self.clock().get("now"))
        return int(now.timestamp() * 1000)

    def create_key(
        self, partner: str, environment: str, scopes: Iterable[str], **extra: Any
    ) -> dict[str, Any]:
        """``POST /_sim/keys``: a new API key record, including the full ``key`` (shown once)."""
        data = self.call(
            "POST",
            "keys",
            {"partner": partner, "environment": environment, "scopes": list(scopes), **extra},
        )
        assert isinstance(data, dict)
        return data

    def limits(self) -> dict[str, Any]:
        data = self.call("GET", "limits")
        assert isinstance(data, dict)
        return data

    def set_limits(self, **values: Any) -> dict[str, Any]:
        """``PUT /_sim/limits`` with these members (``reset_windows=True`` empties windows)."""
        data = self.call("PUT", "limits", values)
        assert isinstance(data, dict)
        return data
