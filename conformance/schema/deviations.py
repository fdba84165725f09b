"""Reviewed, narrowly scoped deviations from what schemathesis expects.

The file (``conformance/schema_deviations.yaml``) is the only place a schemathesis failure can be
accepted; anything it does not match fails the run. Each entry names one check, the operations it
applies to, a non-empty ``when`` that pins the exact response, a ``kind`` and a written reason::

    deviations:
      - id: corridor-not-served
        operations: [rfqLevels, rfqPreview, rfqRequest]
        check: positive_data_acceptance
        kind: by-design
        when: {status: 400, error_reason: corridor_unavailable}
        reason: >-
          A schema-valid chainId or token pair the deployment does not serve is 400 ...

``when`` keys (all given must hold):

* ``status``: HTTP status of the response the check judged (int or list);
* ``error_code`` / ``error_reason``: ``error.code`` / ``error.details.reason`` of that response
  (str or list);
* ``issue_field``: some ``error.details.issues[]`` names this field (dotted path);
* ``issue_contains``: a substring of some ``error.details.issues[].message`` (of that issue,
  when ``issue_field`` is given too);
* ``error_contains``: a substring of the error's text: the rates feed's ``{error: "<string>"}``
  (which has no code or reason to match), or ``error.message`` of an envelope;
* ``failure_title``: the failure's title, exactly (as schemathesis prints it);
* ``message_contains``: a substring of the failure's message;
* ``caller``: ``keyed`` or ``keyless``, the pass of the run (see ``settings.py``).

``kind`` is ``by-design`` (the spec or docs/decisions.md asks for this behaviour), ``defect``
(the simulator or its document is wrong; ``defect`` then says what to fix, and the entry goes
when it is fixed) or ``tool`` (a schemathesis limitation). Wildcards do not exist: an entry with
no operation, no check or an empty ``when`` is refused.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

DEFAULT_PATH = Path(__file__).resolve().parent.parent / "schema_deviations.yaml"
KINDS = ("by-design", "defect", "tool")
CALLERS = ("keyed", "keyless")
WHEN_KEYS = (
    "status",
    "error_code",
    "error_reason",
    "issue_field",
    "issue_contains",
    "error_contains",
    "failure_title",
    "message_contains",
    "caller",
)
MIN_REASON_LENGTH = 40  # a reason is a sentence a reviewer can judge, not a label


class DeviationFileError(ValueError):
    """The deviations file is malformed; the message names the entry and the problem."""


@dataclass(frozen=True)
class Observed:
    """What a failure is matched against."""

    operation: str  # operationId
    checks: tuple[str, ...]  # the check names that report this failure kind
    status: int | None  # status of the judged response
    error_code: str | None
    error_reason: str | None
    issues: tuple[tuple[str, str], ...]  # (field, message) of each error.details.issues entry
    failure_title: str
    failure_message: str
    caller: str  # keyed | keyless
    error_text: str | None = None  # the feed's error string, or the envelope's message

    @staticmethod
    def error_text_of(body: bytes | None) -> str | None:
        """The feed's ``{error: "<string>"}`` string, or an envelope's ``error.message``."""
        try:
            parsed = json.loads(body or b"")
        except (ValueError, UnicodeDecodeError):
            return None
        error = parsed.get("error") if isinstance(parsed, dict) else None
        if isinstance(error, str):
            return error
        message = error.get("message") if isinstance(error, dict) else None
        return message if isinstance(message, str) else None

    @staticmethod
    def error_fields(
        body: bytes | None,
    ) -> tuple[str | None, str | None, tuple[tuple[str, str], ...]]:
        """``(error.code, error.details.reason, issues)`` of an error envelope body."""
        try:
            parsed = json.loads(body or b"")
        except (ValueError, UnicodeDecodeError):
            return None, None, ()
        error = parsed.get("error") if isinstance(parsed, dict) else None
        if not isinstance(error, dict):
            return None, None, ()
        code = error.get("code")
        details = error.get("details")
        details = details if isinstance(details, dict) else {}
        reason = details.get("reason")
        raw_issues = details.get("issues")
        issues = tuple(
            (str(issue.get("field", "")), str(issue.get("message", "")))
            for issue in (raw_issues if isinstance(raw_issues, list) else [])
            if isinstance(issue, dict)
        )
        return (
            code if isinstance(code, str) else None,
            reason if isinstance(reason, str) else None,
            issues,
        )


def _strings(value: Any, what: str) -> tuple[str, ...]:
    values = value if isinstance(value, list) else [value]
    if not values or not all(isinstance(v, str) and v for v in values):
        raise ValueError(f"{what} must be a non-empty string or list of strings")
    return tuple(values)


def _ints(value: Any, what: str) -> tuple[int, ...]:
    values = value if isinstance(value, list) else [value]
    if not values or not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        raise ValueError(f"{what} must be an integer or a list of integers")
    return tuple(values)


@dataclass(frozen=True)
class Deviation:
    id: str
    operations: tuple[str, ...]
    check: str
    kind: str
    reason: str
    statuses: tuple[int, ...] = ()
    error_codes: tuple[str, ...] = ()
    error_reasons: tuple[str, ...] = ()
    issue_field: str | None = None
    issue_contains: str | None = None
    error_contains: str | None = None
    failure_title: str | None = None
    message_contains: str | None = None
    caller: str | None = None
    defect: str | None = None  # for kind=defect: the fix that retires the entry

    @classmethod
    def parse(cls, raw: Mapping[str, Any]) -> Deviation:
        known = {"id", "operations", "operation", "check", "kind", "reason", "when", "defect"}
        unknown = sorted(set(raw) - known)
        if unknown:
            raise ValueError(f"unknown keys {unknown}")
        ident = raw.get("id")
        if not isinstance(ident, str) or not ident:
            raise ValueError("id must be a non-empty string")
        if ("operations" in raw) == ("operation" in raw):
            raise ValueError("give exactly one of operation / operations")
        operations = _strings(raw.get("operations", raw.get("operation")), "operations")
        check = raw.get("check")
        if not isinstance(check, str) or not check:
            raise ValueError("check must name one schemathesis check")
        kind = raw.get("kind")
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}")
        reason = raw.get("reason")
        if not isinstance(reason, str) or len(reason.strip()) < MIN_REASON_LENGTH:
            raise ValueError(f"reason must explain the deviation (>= {MIN_REASON_LENGTH} chars)")
        defect = raw.get("defect")
        if kind == "defect" and (not isinstance(defect, str) or not defect.strip()):
            raise ValueError("kind: defect needs `defect:` saying what to fix")
        if defect is not None and not isinstance(defect, str):
            raise ValueError("defect must be a string")
        when = raw.get("when")
        if not isinstance(when, dict) or not when:
            raise ValueError("when must be a non-empty mapping: deviations are never wholesale")
        unknown_when = sorted(set(when) - set(WHEN_KEYS))
        if unknown_when:
            raise ValueError(f"unknown `when` keys {unknown_when} (known: {list(WHEN_KEYS)})")
        caller = when.get("caller")
        if caller is not None and caller not in CALLERS:
            raise ValueError(f"when.caller must be one of {CALLERS}")
        for key in (
            "issue_field",
            "issue_contains",
            "error_contains",
            "failure_title",
            "message_contains",
        ):
            if key in when and (not isinstance(when[key], str) or not when[key]):
                raise ValueError(f"when.{key} must be a non-empty string")
        return cls(
            id=ident,
            operations=operations,
            check=check,
            kind=str(kind),
            reason=" ".join(reason.split()),
            statuses=_ints(when["status"], "when.status") if "status" in when else (),
            error_codes=_strings(when["error_code"], "when.error_code")
            if "error_code" in when
            else (),
            error_reasons=_strings(when["error_reason"], "when.error_reason")
            if "error_reason" in when
            else (),
            issue_field=when.get("issue_field"),
            issue_contains=when.get("issue_contains"),
            error_contains=when.get("error_contains"),
            failure_title=when.get("failure_title"),
            message_contains=when.get("message_contains"),
            caller=caller,
            defect=" ".join(defect.split()) if isinstance(defect, str) else None,
        )

    def matches(self, seen: Observed) -> bool:
        if seen.operation not in self.operations or self.check not in seen.checks:
            return False
        if self.statuses and seen.status not in self.statuses:
            return False
        if self.error_codes and seen.error_code not in self.error_codes:
            return False
        if self.error_reasons and seen.error_reason not in self.error_reasons:
            return False
        if (self.issue_field is not None or self.issue_contains is not None) and not any(
            (self.issue_field is None or field == self.issue_field)
            and (self.issue_contains is None or self.issue_contains in message)
            for field, message in seen.issues
        ):
            return False
        if self.error_contains is not None and self.error_contains not in (seen.error_text or ""):
            return False
        if self.failure_title is not None and seen.failure_title != self.failure_title:
            return False
        if self.message_contains is not None and self.message_contains not in seen.failure_message:
            return False
        return self.caller is None or seen.caller == self.caller


@dataclass
class Usage:
    hits: int = 0
    example: str = ""  # one matched failure, for the report


@dataclass
class DeviationSet:
    """The loaded file plus how often each entry matched during a run (thread-safe)."""

    deviations: tuple[Deviation, ...]
    source: Path | None = None
    usage: dict[str, Usage] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def match(self, seen: Observed, example: str) -> Deviation | None:
        for deviation in self.deviations:
            if deviation.matches(seen):
                with self._lock:
                    used = self.usage.setdefault(deviation.id, Usage())
                    used.hits += 1
                    if not used.example:
                        used.example = example
                return deviation
        return None

    def unused(self) -> list[Deviation]:
        return [d for d in self.deviations if d.id not in self.usage]

    def validate_against(self, operation_ids: Iterable[str], check_names: Iterable[str]) -> None:
        """Refuse entries naming operations or checks the run does not know (typos)."""
        operations, checks = set(operation_ids), set(check_names)
        problems = []
        for deviation in self.deviations:
            missing = [op for op in deviation.operations if op not in operations]
            if missing:
                problems.append(f"{deviation.id}: unknown operations {missing}")
            if deviation.check not in checks:
                problems.append(f"{deviation.id}: unknown check {deviation.check!r}")
        if problems:
            where = f"{self.source}: " if self.source else ""
            raise DeviationFileError(where + "; ".join(problems))


def parse(data: Any, source: Path | None = None) -> DeviationSet:
    where = f"{source}: " if source else ""
    if not isinstance(data, dict) or set(data) != {"deviations"}:
        raise DeviationFileError(f"{where}expected a mapping with one key, `deviations`")
    entries = data["deviations"] or []
    if not isinstance(entries, list):
        raise DeviationFileError(f"{where}`deviations` must be a list")
    parsed: list[Deviation] = []
    for index, raw in enumerate(entries):
        label = raw.get("id", f"#{index + 1}") if isinstance(raw, dict) else f"#{index + 1}"
        if not isinstance(raw, dict):
            raise DeviationFileError(f"{where}entry {label}: not a mapping")
        try:
            parsed.append(Deviation.parse(raw))
        except ValueError as exc:
            raise DeviationFileError(f"{where}entry {label}: {exc}") from None
    ids = [d.id for d in parsed]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise DeviationFileError(f"{where}duplicate ids {duplicates}")
    return DeviationSet(tuple(parsed), source)


def load(path: Path = DEFAULT_PATH) -> DeviationSet:
    with path.open(encoding="utf-8") as handle:
        return parse(yaml.safe_load(handle), path)
