"""Violations as the proxy finds them: :class:`Finding` (the rule id of the conformance matrix,
whose side broke it, the exchange it was seen on), :class:`Inspection` (runs the checks of one
exchange: each names its rule and side, and a failed assertion of the suite's becomes a
finding) and :class:`Findings` (everything found in a run: printed as it happens, kept for the
report with bounded memory).
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, TextIO

from rfqkit.redaction import REDACTED, redact
from rfqsim.proxy.exchange import ProxiedExchange

Side = Literal["service", "client"]
log = logging.getLogger("rfqsim.proxy")

MESSAGE_CHARS = 400  # a finding's message (the suite's assertion text can quote whole bodies)
BODY_CHARS = 4096  # request and response bodies kept in the report
KEPT_PER_KIND = 50  # findings kept in full per (rule, side, operation); the rest are counted
# Headers whose values are credentials: never written to a report or a line.
SECRET_HEADERS = frozenset({"authorization", "x-api-key", "x-rfq-claim", "x-ramp-claim", "cookie"})
# What a check that cannot even read the answer raises: a shape so far off is a finding too.
SHAPE_ERRORS = (AssertionError, KeyError, TypeError, ValueError, IndexError, AttributeError)


@dataclass(frozen=True)
class Finding:
    rule: str
    side: Side
    method: str
    path: str
    status: int
    request_id: str | None
    message: str
    request: dict[str, Any]
    response: dict[str, Any]

    def line(self) -> str:
        """One line for the terminal, secrets redacted."""
        rid = self.request_id or "-"
        return redact(
            f"VIOLATION {self.side} {self.rule}: {self.method} {self.path} -> {self.status} "
            f"[{rid}] {self.message}"
        )

    def as_json(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "side": self.side,
            "method": self.method,
            "path": self.path,
            "status": self.status,
            "request_id": self.request_id,
            "message": self.message,
            "request": self.request,
            "response": self.response,
        }


def _headers(items: list[tuple[str, str]]) -> dict[str, str]:
    shown: dict[str, str] = {}
    for name, value in items:
        kept = REDACTED if name.lower() in SECRET_HEADERS else redact(value)
        shown[name] = f"{shown[name]}, {kept}" if name in shown else kept
    return shown


def _body(raw: bytes | None, complete: bool) -> str:
    if raw is None:
        return "<not readable>"
    text = raw[:BODY_CHARS].decode("utf-8", errors="replace")
    cut = len(raw) > BODY_CHARS or not complete
    return redact(text) + (" …" if cut else "")


def _message(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    if not isinstance(exc, AssertionError):
        text = f"{type(exc).__name__}: {text}"
    text = " ".join(text.split())
    return redact(text if len(text) <= MESSAGE_CHARS else text[: MESSAGE_CHARS - 1] + "…")


def finding_of(exchange: ProxiedExchange, rule: str, side: Side, message: str) -> Finding:
    return Finding(
        rule=rule,
        side=side,
        method=exchange.method,
        path=exchange.path,
        status=exchange.status,
        request_id=exchange.request_id,
        message=message,
        request={
            "method": exchange.method,
            "target": redact(exchange.target),
            "headers": _headers(exchange.request_headers.items()),
            "body": _body(exchange.request_body, exchange.request_complete),
        },
        response={
            "status": exchange.status,
            "headers": _headers(exchange.headers.items()),
            "body": _body(exchange.decoded_body, exchange.body_complete),
        },
    )


@dataclass
class Inspection:
    """The checks of one exchange. :meth:`check` runs one (a function that asserts, such as the
    suite's ``assert_*``) under its rule id and side; every rule checked is exercised."""

    exchange: ProxiedExchange
    found: list[Finding] = field(default_factory=list)
    exercised: set[str] = field(default_factory=set)

    def check(self, rule: str, assertion: Callable[[], object], side: Side = "service") -> bool:
        """Run ``assertion``; True when it held. A failure is a finding of ``side``."""
        self.exercised.add(rule)
        try:
            assertion()
        except SHAPE_ERRORS as exc:
            self.fail(rule, _message(exc), side)
            return False
        return True

    def fail(self, rule: str, message: str, side: Side = "service") -> None:
        self.exercised.add(rule)
        if any(f.rule == rule and f.side == side for f in self.found):
            return  # one finding per rule and side on one exchange
        self.found.append(finding_of(self.exchange, rule, side, redact(message)))

    @property
    def rules_found(self) -> list[str]:
        return list(dict.fromkeys(f.rule for f in self.found))


@dataclass
class UpstreamFailure:
    method: str
    path: str
    error: str


class Findings:
    """Everything a run found. Findings are printed at once; for the report each (rule, side,
    operation) keeps its first :data:`KEPT_PER_KIND` in full and counts the rest, so a long run
    that repeats one violation does not grow without bound."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.exchanges = 0
        self.exercised: set[str] = set()
        self.kept: list[Finding] = []
        self.counts: Counter[tuple[str, str]] = Counter()  # (rule, side) -> findings
        self._per_kind: Counter[tuple[str, str, str, str]] = Counter()
        self.upstream_failures = 0
        self.last_upstream_failure: UpstreamFailure | None = None
        self.proxy_errors = 0  # checks that crashed (a bug of the proxy, logged)
        self._lock = threading.Lock()

    def record(self, inspection: Inspection, operation: str) -> None:
        with self._lock:
            self.exchanges += 1
            self.exercised |= inspection.exercised
            for finding in inspection.found:
                self.counts[(finding.rule, finding.side)] += 1
                kind = (finding.rule, finding.side, finding.method, operation)
                self._per_kind[kind] += 1
                if self._per_kind[kind] <= KEPT_PER_KIND:
                    self.kept.append(finding)
                print(finding.line(), file=self.out, flush=True)

    def upstream_failed(self, method: str, path: str, error: str) -> None:
        """An exchange the upstream did not answer (the proxy answered 502 for it)."""
        with self._lock:
            self.exchanges += 1
            self.upstream_failures += 1
            self.last_upstream_failure = UpstreamFailure(method, path, error)
        print(
            redact(f"UPSTREAM {method} {path}: {error} (answered 502)"), file=self.out, flush=True
        )

    def check_crashed(self, exchange: ProxiedExchange) -> None:
        with self._lock:
            self.proxy_errors += 1
        log.exception("a check crashed on %s %s", exchange.method, exchange.path)

    @property
    def total(self) -> int:
        return sum(self.counts.values())
