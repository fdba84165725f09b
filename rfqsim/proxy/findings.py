"""Violations as the proxy finds them: :class:`Finding` (the rule id of the conformance matrix,
whose side broke it, the exchange it was seen on), :class:`Inspection` (runs the checks of one
exchange: each names its rule and side, and a failed assertion of the suite's becomes a
finding) and :class:`Findings` (everything found in a run: printed as it happens, kept for the
report with bounded memory).
"""

from __future__ import annotations

import json
import logging
import threading
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal, TextIO

from conformance.wire.client import parse_json
from conformance.wire.wording import shown
from rfqkit.redaction import Redactor
from rfqsim.proxy.exchange import ProxiedExchange

Side = Literal["service", "client"]
log = logging.getLogger("rfqsim.proxy")

MESSAGE_CHARS = 400  # a finding's message (the suite's assertion text can quote whole bodies)
BODY_CHARS = 4096  # request and response bodies kept in the report
KEPT_PER_KIND = 50  # findings kept in full per (rule, side, operation); the rest are counted
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
        """One line for the terminal (its parts were redacted when the finding was made)."""
        rid = self.request_id or "-"
        return (
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


def secrets_of(exchange: ProxiedExchange, redactor: Redactor) -> frozenset[str]:
    """The secret values this exchange carries, by name: its secret headers both ways and the
    secret fields of its JSON bodies. Found once, searched for in everything written of it."""
    found = redactor.header_values(exchange.request_headers.items())
    found |= redactor.header_values(exchange.headers.items())
    for raw in (exchange.request_body, exchange.decoded_body):
        parsed, is_json = parse_json(raw) if raw else (None, False)
        if is_json:
            found |= redactor.field_values(parsed)
    return frozenset(found)


def _headers(
    items: Iterable[tuple[str, str]], redactor: Redactor, known: frozenset[str]
) -> dict[str, str]:
    shown: dict[str, str] = {}
    for name, value in items:
        secret = redactor.is_secret_header(name)
        kept = redactor.header(name, value) if secret else redactor.text(value, known)
        shown[name] = f"{shown[name]}, {kept}" if name in shown else kept
    return shown


def _body(raw: bytes | None, complete: bool, redactor: Redactor, known: frozenset[str]) -> str:
    if raw is None:
        return "<not readable>"
    parsed, is_json = parse_json(raw) if complete else (None, False)
    if is_json:  # fields by name, then any secret value quoted elsewhere in it
        raw = json.dumps(redactor.json(parsed), ensure_ascii=False).encode()
    text = raw[:BODY_CHARS].decode("utf-8", errors="replace")
    cut = len(raw) > BODY_CHARS or not complete
    return redactor.text(text, known) + (" …" if cut else "")


def _plain(exc: BaseException) -> str:
    """What a failed check says, in the spec's words: the suite's own assertion text, a value
    given in its place as JSON, and a check that could not read the answer as what it missed,
    never Python's names or reprs (`KeyError: 'taker'`, `None`)."""
    if isinstance(exc, AssertionError):
        said = exc.args[0] if exc.args else None
        if said is None or said == "":
            return "the answer is not what the rule says"
        if not isinstance(said, str):
            return f"got {shown(said)}"
        return said.partition("\nassert ")[0]  # without pytest's explanation, where rewritten
    if isinstance(exc, KeyError):
        return f"missing: {exc.args[0]}" if exc.args else "a required member is missing"
    if isinstance(exc, IndexError):
        return "an array has fewer items than the rule reads"
    if isinstance(exc, TypeError | AttributeError):
        return "a member holds another type of value than the spec gives it"
    return "a value is not in the spec's format"  # ValueError: a number, hex or time unread


def _message(exc: BaseException) -> str:
    text = " ".join(_plain(exc).split())
    return text if len(text) <= MESSAGE_CHARS else text[: MESSAGE_CHARS - 1] + "…"


def finding_of(
    exchange: ProxiedExchange,
    rule: str,
    side: Side,
    message: str,
    redactor: Redactor | None = None,
) -> Finding:
    """A finding of ``exchange``, every part of it redacted: the secrets it carries by name
    (wherever their values are quoted, the message included) and any by shape."""
    redactor = redactor or Redactor()
    known = secrets_of(exchange, redactor)
    return Finding(
        rule=rule,
        side=side,
        method=exchange.method,
        path=redactor.text(exchange.path, known),
        status=exchange.status,
        request_id=exchange.request_id,
        message=redactor.text(message, known),
        request={
            "method": exchange.method,
            "target": redactor.text(exchange.target, known),
            "headers": _headers(exchange.request_headers.items(), redactor, known),
            "body": _body(exchange.request_body, exchange.request_complete, redactor, known),
        },
        response={
            "status": exchange.status,
            "headers": _headers(exchange.headers.items(), redactor, known),
            "body": _body(exchange.decoded_body, exchange.body_complete, redactor, known),
        },
    )


@dataclass
class Inspection:
    """The checks of one exchange. :meth:`check` runs one (a function that asserts, such as the
    suite's ``assert_*``) under its rule id and side; every rule checked is exercised."""

    exchange: ProxiedExchange
    redactor: Redactor = field(default_factory=Redactor)
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
        self.found.append(finding_of(self.exchange, rule, side, message, self.redactor))

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

    def __init__(self, out: TextIO, redactor: Redactor | None = None) -> None:
        self.out = out
        self.redactor = redactor or Redactor()
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
            self.last_upstream_failure = UpstreamFailure(
                method, self.redactor.text(path), self.redactor.text(error)
            )
        line = self.redactor.text(f"UPSTREAM {method} {path}: {error} (answered 502)")
        print(line, file=self.out, flush=True)

    def check_crashed(self, exchange: ProxiedExchange) -> None:
        with self._lock:
            self.proxy_errors += 1
        log.exception("a check crashed on %s %s", exchange.method, exchange.path)

    @property
    def total(self) -> int:
        return sum(self.counts.values())
