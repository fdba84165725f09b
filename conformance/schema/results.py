"""What a schemathesis run produced: per pass (:class:`PassResult`) the requests, statuses and
error outcomes of each operation (:class:`OperationStats`), the distinct failures nobody
accepted (:class:`FailureRecord`, repeats counted), engine errors, the links followed and what
the hooks did; over the whole run (:class:`RunResult`) the same summed up, with the accepted
deviations and a one-screen :meth:`RunResult.summary`. :class:`RunError` is the run that could not
happen at all. The JUnit report (``junit.py``) and the pytest tests read these.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from conformance.schema.deviations import DeviationSet
from conformance.schema.settings import RunSettings

SNIPPET = 600  # characters of a message, request or response body kept in a record


class RunError(RuntimeError):
    """Schemathesis could not run at all (schema not loadable, engine crash)."""


@dataclass
class FailureRecord:
    """One distinct failure nobody accepted (repeats counted, not listed)."""

    pass_name: str
    phase: str
    operation: str  # schemathesis label, "POST /v2/rfq/request"
    checks: tuple[str, ...]
    title: str
    message: str
    request: str  # method, URL, headers (credentials redacted), body
    status: int | None
    response: str  # body snippet
    count: int = 1

    def describe(self) -> str:
        checks = ", ".join(self.checks) or "check error"
        where = f"[{self.pass_name}/{self.phase}] {self.operation}"
        return (
            f"{where}: {self.title} ({checks}; x{self.count})"
            f"\n  {self.message.strip()[:SNIPPET]}\n  request: {self.request}"
            f"\n  response: {self.status} {self.response}"
        )


@dataclass
class OperationStats:
    requests: int = 0
    statuses: Counter[int] = field(default_factory=Counter)
    outcomes: Counter[str] = field(default_factory=Counter)  # "400 invalid_request/reason"
    phases: Counter[str] = field(default_factory=Counter)
    skipped: list[str] = field(default_factory=list)
    elapsed: float = 0.0


@dataclass
class PassResult:
    name: str
    caller: str  # keyed | keyless
    operations: dict[str, OperationStats] = field(default_factory=dict)
    failures: dict[tuple[str, ...], FailureRecord] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)  # engine errors (non-fatal)
    transitions: Counter[str] = field(default_factory=Counter)  # applied links by name
    transition_statuses: Counter[tuple[str, int]] = field(default_factory=Counter)
    proofs_signed: int = 0
    steered: int = 0  # positive cases whose token pair was steered to a served direction
    webhooks_created: int = 0
    elapsed: float = 0.0

    @property
    def requests(self) -> int:
        return sum(stats.requests for stats in self.operations.values())


@dataclass
class RunResult:
    base_url: str
    settings: RunSettings
    deviations: DeviationSet
    links: list[str]
    operation_ids: dict[str, str]  # label -> operationId
    check_names: list[str]
    passes: list[PassResult] = field(default_factory=list)

    @property
    def requests(self) -> int:
        return sum(p.requests for p in self.passes)

    def failures(self, checks: Iterable[str] | None = None) -> list[FailureRecord]:
        """Unaccepted failures, optionally only those reported by one of ``checks``."""
        wanted = None if checks is None else set(checks)
        return [
            f
            for p in self.passes
            for f in p.failures.values()
            if wanted is None or wanted.intersection(f.checks)
        ]

    def errors(self) -> list[str]:
        return [f"[{p.name}] {e}" for p in self.passes for e in p.errors]

    def transitions(self, caller: str | None = None) -> Counter[str]:
        """Applied links by name, over every pass (or those of one caller)."""
        total: Counter[str] = Counter()
        for p in self.passes:
            if caller is None or p.caller == caller:
                total.update(p.transitions)
        return total

    def transition_statuses(self, caller: str | None = None) -> Counter[tuple[str, int]]:
        total: Counter[tuple[str, int]] = Counter()
        for p in self.passes:
            if caller is None or p.caller == caller:
                total.update(p.transition_statuses)
        return total

    def summary(self) -> str:
        lines = [
            f"schemathesis against {self.base_url}: {self.requests} requests "
            f"(seed {self.settings.seed}, max-examples {self.settings.max_examples}, "
            f"{'full' if self.settings.full else 'default'} run)"
        ]
        for p in self.passes:
            lines.append(
                f"  {p.name}: {p.requests} requests in {p.elapsed:.1f}s, "
                f"{len(p.failures)} distinct failures, {len(p.errors)} engine errors, "
                f"links followed {dict(sorted(p.transitions.items()))}"
            )
        used = self.deviations.usage
        lines.append(
            "  accepted deviations: "
            + (", ".join(f"{k} x{v.hits}" for k, v in sorted(used.items())) or "none")
        )
        unused = [d.id for d in self.deviations.unused()]
        if unused:
            lines.append(f"  deviations not seen in this run: {', '.join(unused)}")
        return "\n".join(lines)
