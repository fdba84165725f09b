"""Plain HTTP to the service under test, the way any integrator's script would do it:
:func:`request` sends one request and reads the whole :class:`Response` (status, raw headers in
order, raw body, the parsed JSON when there is one, the elapsed time) and never raises on an
HTTP status; :class:`Client` does the same relative to one base URL with default headers, and can
leave from another loopback address (:func:`fresh_loopback_address`) so the service sees another
client IP. HTTP is the standard library's (``http.client``), so it works the same inside
pytest, under xdist and outside; nothing here imports the simulator. Addresses in parsed bodies
are checksummed (:func:`checksummed`): the spec lets a service answer either form. The checks on a
response are in :mod:`conformance.wire.response_checks`, the /_sim control API in
:mod:`conformance.deployment.sim_control` and chain JSON-RPC in :mod:`rfqkit.json_rpc`.
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
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode, urlsplit

from eth_utils.address import to_checksum_address

from conformance.wire.kept import KeptConnections
from conformance.wire.needs import InputProblem

DEFAULT_TIMEOUT = 30.0
REQUEST_ID_HEADER = "X-Request-Id"


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


NOT_JSON = object()


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
        return self.headers.get(REQUEST_ID_HEADER)

    def json(self) -> Any:
        """The parsed body; fails the test when the body is not JSON."""
        assert self.is_json, f"{self.describe()}: body is not JSON: {self.raw[:200]!r}"
        return self.body

    def describe(self) -> str:
        """``METHOD URL -> STATUS [X-Request-Id ID]``: what a failure message names, so the
        service's operator can find the request in their logs."""
        request_id = self.headers.get(REQUEST_ID_HEADER)
        tag = f" [{REQUEST_ID_HEADER} {request_id}]" if request_id else ""
        return f"{self.method} {self.url} -> {self.status}{tag}"

    def __repr__(self) -> str:
        return f"<Response {self.describe()} {self.raw[:300]!r}>"


_LOWERCASE_ADDRESS = re.compile(r"0x[0-9a-f]{40}")


def checksummed(value: Any) -> Any:
    """``value`` with every all-lowercase EVM address string in it checksummed (EIP-55).

    The spec allows a service to answer addresses lowercase or checksummed, so tests compare
    them in one form; a mixed-case address is left as it is (a wrong checksum stays wrong)."""
    if isinstance(value, str):
        return to_checksum_address(value) if _LOWERCASE_ADDRESS.fullmatch(value) else value
    if isinstance(value, list):
        return [checksummed(item) for item in value]
    if isinstance(value, dict):
        return {key: checksummed(item) for key, item in value.items()}
    return value


def parse_json(raw: bytes) -> tuple[Any, bool]:
    """The body as JSON (addresses in one form: :func:`checksummed`); ``raw`` keeps the
    bytes exactly as received."""
    if not raw.strip():
        return None, False
    try:
        return checksummed(jsonlib.loads(raw)), True
    except (ValueError, UnicodeDecodeError):
        return None, False


def request(
    method: str,
    url: str,
    *,
    json: Any = NOT_JSON,
    data: bytes | str | None = None,
    headers: Mapping[str, str] | None = None,
    params: Mapping[str, Any] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    ssl_context: ssl.SSLContext | None = None,
    source_address: tuple[str, int] | None = None,
    kept: KeptConnections | None = None,
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
    if json is not NOT_JSON:
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

    def connect() -> http.client.HTTPConnection:
        if parts.scheme == "https":
            return http.client.HTTPSConnection(
                str(parts.hostname),
                parts.port,
                timeout=timeout,
                context=ssl_context,
                source_address=source_address,
            )
        return http.client.HTTPConnection(
            str(parts.hostname), parts.port, timeout=timeout, source_address=source_address
        )

    def exchange(connection: http.client.HTTPConnection) -> http.client.HTTPResponse:
        # A server may answer (413) and stop reading before a large body is sent;
        # its response can still be waiting in the socket.
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            connection.request(method, target, body=body, headers=send_headers)
        return connection.getresponse()

    where = (parts.scheme, parts.hostname, parts.port, source_address)
    if kept is None:
        return _exchanged(method, url, connect, exchange, None, where)
    with kept.turn(where):
        return _exchanged(method, url, connect, exchange, kept, where)


def _exchanged(
    method: str,
    url: str,
    connect: Callable[[], http.client.HTTPConnection],
    exchange: Callable[[http.client.HTTPConnection], http.client.HTTPResponse],
    kept: KeptConnections | None,
    where: object,
) -> Response:
    """One request on a new connection, or on the one `kept` holds for `where`."""
    held = kept.take(where) if kept is not None else None
    connection = held or connect()
    started = time.monotonic()
    keep = False
    try:
        try:
            reply = exchange(connection)
        except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
            if held is None:
                raise
            # The service closed the kept connection while it was idle, before reading this
            # request: sent again on a new one.
            connection.close()
            connection = connect()
            reply = exchange(connection)
        raw = reply.read()
        status, header_items = reply.status, reply.getheaders()
        keep = kept is not None and not reply.will_close
    finally:
        if keep:
            assert kept is not None
            kept.keep(where, connection)
        else:
            connection.close()
            if kept is not None:
                kept.forget(where)
    elapsed = time.monotonic() - started
    parsed, is_json = parse_json(raw)
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


class Pacing:
    """Client-side pacing against a target whose limits the suite cannot raise: a 429 is
    waited out and the request sent again (Retry-After when given, else X-RateLimit-Reset,
    else, for the outstanding-RFQ cap that has neither, ``cap_wait_s`` at a time), for at most
    ``budget_s`` per request; a response leaving X-RateLimit-Remaining at 0 makes the next
    request wait for X-RateLimit-Reset first. Shared by the clients derived from one another,
    as they share the service's budget. A firm request still refused by the outstanding-RFQ cap
    when the budget is spent raises :class:`conformance.wire.needs.InputProblem`: another client
    holds the quotes of a shared key, which is an input problem and not a spec failure."""

    def __init__(self, *, budget_s: float = 150.0, cap_wait_s: float = 5.0) -> None:
        self.budget_s = budget_s
        self.cap_wait_s = cap_wait_s
        self.not_before = 0.0  # monotonic time before which no request is sent

    @staticmethod
    def _seconds(value: str | None) -> float | None:
        try:
            return max(0.0, float(value)) if value is not None else None
        except ValueError:
            return None

    def wait_turn(self) -> None:
        delay = self.not_before - time.monotonic()
        if delay > 0:
            time.sleep(delay)

    def note(self, resp: Response) -> float | None:
        """Seconds to wait before sending again when ``resp`` is a 429, else None."""
        reset = self._seconds(resp.headers.get("X-RateLimit-Reset"))
        if resp.headers.get("X-RateLimit-Remaining") == "0" and reset is not None:
            self.not_before = time.monotonic() + reset
        if resp.status != 429:
            return None
        retry_after = self._seconds(resp.headers.get("Retry-After"))
        wait = retry_after if retry_after is not None else reset
        return self.cap_wait_s if wait is None else max(wait, 0.2)


def _is_cap(resp: Response) -> bool:
    """The outstanding-RFQ cap's refusal: a firm request answered 429 without Retry-After (the
    time windows' 429s carry one)."""
    firm = resp.method == "POST" and urlsplit(resp.url).path.endswith("/v2/rfq/request")
    return firm and resp.status == 429 and resp.headers.get("Retry-After") is None


def _cap_in_use(resp: Response, sent: Mapping[str, str], pacing: Pacing | None) -> InputProblem:
    """A paced request still refused by the outstanding-RFQ cap (a 429 without Retry-After)
    once the suite's wait is over: another client holds the key's (or client IP's) quotes, an
    input problem rather than a spec failure."""
    credential = sent.get("Authorization", "").removeprefix("Bearer ") or sent.get("X-API-Key")
    waited = f"{pacing.budget_s:.0f} s" if pacing is not None else "the suite's wait"
    path = urlsplit(resp.url).path
    if credential:
        return InputProblem(
            "key:trades",
            f"the key {credential.split('.', 1)[0]}…'s outstanding-RFQ cap is in use by another "
            f"client: {resp.method} {path} answered 429 without Retry-After for {waited} "
            "(give a key no other client uses)",
        )
    return InputProblem(
        "loopback",
        f"this client IP's outstanding-RFQ cap is in use by another client: {resp.method} "
        f"{path} answered 429 without Retry-After for {waited}",
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
        pacing: Pacing | None = None,
        kept: KeptConnections | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.kept = kept  # None: a connection per request
        self.headers = dict(headers or {})
        self.timeout = timeout
        self.ssl_context = ssl_context
        self.source_address = source_address
        self.pacing = pacing  # None: every 429 is returned as it is

    def paced(self, pacing: Pacing | None = None) -> Client:
        """The same client, waiting out 429s (see :class:`Pacing`)."""
        return self._copy(pacing=pacing or self.pacing or Pacing())

    def _copy(self, **changes: Any) -> Client:
        fields: dict[str, Any] = {
            "headers": self.headers,
            "timeout": self.timeout,
            "ssl_context": self.ssl_context,
            "source_address": self.source_address,
            "pacing": self.pacing,
            "kept": self.kept,
        }
        fields.update(changes)
        return Client(self.base_url, **fields)

    def url(self, path: str) -> str:
        return path if "://" in path else f"{self.base_url}/{path.lstrip('/')}"

    def request(
        self,
        method: str,
        path: str,
        *,
        json: Any = NOT_JSON,
        data: bytes | str | None = None,
        headers: Mapping[str, str] | None = None,
        params: Mapping[str, Any] | None = None,
        timeout: float | None = None,
    ) -> Response:
        pacing = self.pacing
        deadline = time.monotonic() + (pacing.budget_s if pacing else 0.0)
        while True:
            if pacing is not None:
                pacing.wait_turn()
            resp = request(
                method,
                self.url(path),
                json=json,
                data=data,
                headers={**self.headers, **(headers or {})},
                params=params,
                timeout=self.timeout if timeout is None else timeout,
                ssl_context=self.ssl_context,
                source_address=self.source_address,
                kept=self.kept,
            )
            wait = pacing.note(resp) if pacing is not None else None
            if wait is None:
                return resp
            if time.monotonic() + wait > deadline:
                if _is_cap(resp):
                    raise _cap_in_use(resp, {**self.headers, **(headers or {})}, pacing)
                return resp
            time.sleep(wait)

    def get(self, path: str, **kwargs: Any) -> Response:
        return self.request("GET", path, **kwargs)

    def wait_for_room(self, minimum: int, probe: str = "/v2/rfq/levels") -> None:
        """Start with at least ``minimum`` requests left in the limiter's window: one request
        reads X-RateLimit-Remaining, and when fewer are left the window is waited out. For a
        test on a shared key that holds a firm quote across several requests: a wait for the
        window in the middle (up to a minute) could outlast the quote's 60 s life."""
        resp = self.get(probe)
        remaining = Pacing._seconds(resp.headers.get("X-RateLimit-Remaining"))
        reset = Pacing._seconds(resp.headers.get("X-RateLimit-Reset"))
        if remaining is not None and remaining < minimum and reset is not None:
            time.sleep(reset + 0.5)

    def post(self, path: str, **kwargs: Any) -> Response:
        return self.request("POST", path, **kwargs)

    def delete(self, path: str, **kwargs: Any) -> Response:
        return self.request("DELETE", path, **kwargs)

    def kept_alive(self) -> Client:
        """The same client on one kept-alive connection (per thread), and the clients derived
        from it on the same one: a test that reads a limiter's counts through it reads one
        instance's (:class:`KeptConnections`)."""
        return self._copy(kept=KeptConnections())

    def with_headers(self, headers: Mapping[str, str]) -> Client:
        """A client sending these headers as well (an API key, a claim token)."""
        return self._copy(headers={**self.headers, **headers})

    def from_address(self, host: str) -> Client:
        """A client whose connections leave from this local address (``"127.0.0.3"``).

        On loopback every 127.0.0.0/8 address reaches the service, which then sees a different
        client IP: per-IP limits, grants and claims can be tested without disturbing others.
        """
        # Another client IP has a budget of its own.
        return self._copy(source_address=(host, 0), pacing=Pacing() if self.pacing else None)


def on_one_connection(client: Client) -> Iterator[Client]:
    """`client` (and every client a test derives from it) on one kept-alive connection per
    client address, closed after the test: a test that reads counts of the limiters, which the
    spec enforces per running instance, or the ladder's per-instance cache, reads one
    instance's behind a connection balancer. A module overrides `http` with it."""
    kept = client.kept_alive()
    try:
        yield kept
    finally:
        assert kept.kept is not None
        kept.kept.close()


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

    ``w`` is the pytest-xdist worker number (``PYTEST_XDIST_WORKER=gw3`` -> 3, else 0) plus
    ``RFQSIM_LOOPBACK_BLOCK`` (default 0; set by a tool that runs pytest several times against
    one service), so workers and runs sharing one service do not share addresses either. Tests
    that exercise per-IP behaviour (keyless limits, grants, the IP backstop) each take their own
    address.
    """
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw")
    block = os.environ.get("RFQSIM_LOOPBACK_BLOCK", "0")
    offset = (int(worker) if worker.isdigit() else 0) + (int(block) if block.isdigit() else 0)
    second = 77 + offset % 150
    index = next(_LOOPBACK_SEQUENCE)
    high, low = divmod(index, 254)
    return f"127.{second}.{high % 256}.{low + 1}"
