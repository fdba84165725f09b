"""The report a run leaves in ``--report DIR``: ``violations.json`` (``{exchanges,
rules_exercised, violations: [{rule, side, method, path, status, request_id, message, request,
response}]}``), ``violations.md`` (per rule: the spec's statement, how often and on which side,
the first findings; then upstream failures) and ``junit.xml`` (one test case per rule the run
exercised, failed when violated: what CI systems read). Files are replaced atomically.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections import defaultdict
from pathlib import Path

from rfqkit import junit
from rfqsim.proxy.findings import KEPT_PER_KIND, Finding, Findings
from rfqsim.proxy.spec import rules

SHOWN_PER_RULE = 5  # findings listed under each rule in violations.md


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(
        "w", encoding="utf-8", dir=path.parent, prefix=f".{path.name}.", delete=False
    ) as handle:
        handle.write(text)
        temporary = Path(handle.name)
    temporary.chmod(0o644)  # a report for CI artifacts and colleagues (secrets are redacted)
    os.replace(temporary, path)


def as_json(findings: Findings) -> dict[str, object]:
    return {
        "exchanges": findings.exchanges,
        "rules_exercised": sorted(findings.exercised),
        "violations": [finding.as_json() for finding in findings.kept],
    }


def _statement(rule_id: str) -> str:
    rule = rules().get(rule_id)
    if rule is None:
        return ""
    text = " ".join(rule.text.split())
    return f"{text} (docs/spec/{rule.source}:{rule.line})"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def as_markdown(findings: Findings, upstream: str) -> str:
    total = findings.total
    service = sum(n for (_, side), n in findings.counts.items() if side == "service")
    lines = [
        "# rfqsim proxy: violations",
        "",
        f"Upstream `{upstream}`: {findings.exchanges} exchanges, {total} violations "
        f"({service} by the service, {total - service} by clients), "
        f"{len(findings.exercised)} rules of the spec exercised.",
        "",
    ]
    by_rule: dict[tuple[str, str], list[Finding]] = defaultdict(list)
    for finding in findings.kept:
        by_rule[(finding.rule, finding.side)].append(finding)
    if findings.counts:
        lines += ["| rule | side | violations | the spec says |", "|---|---|---|---|"]
        for (rule_id, side), count in sorted(findings.counts.items()):
            lines.append(f"| `{rule_id}` | {side} | {count} | {_cell(_statement(rule_id))} |")
        lines.append("")
        for (rule_id, side), count in sorted(findings.counts.items()):
            lines += [f"## `{rule_id}` ({side})", ""]
            for finding in by_rule[(rule_id, side)][:SHOWN_PER_RULE]:
                rid = finding.request_id or "-"
                lines.append(
                    f"- `{finding.method} {finding.path}` → {finding.status} (`{rid}`): "
                    f"{finding.message}"
                )
            if count > SHOWN_PER_RULE:
                lines.append(
                    f"- … {count - SHOWN_PER_RULE} more (violations.json keeps up to "
                    f"{KEPT_PER_KIND} per rule, side and operation)"
                )
            lines.append("")
    else:
        lines += ["No violations.", ""]
    if findings.upstream_failures:
        last = findings.last_upstream_failure
        lines += [
            "## Upstream failures",
            "",
            f"{findings.upstream_failures} requests could not reach the upstream and were "
            "answered 502 `upstream_error` by the proxy"
            + (f"; the last: `{last.method} {last.path}`: {last.error}" if last else "")
            + ".",
            "",
        ]
    if findings.proxy_errors:
        lines += [
            "## Checks that failed to run",
            "",
            f"{findings.proxy_errors} exchanges met a check that crashed (logged with its "
            "traceback): a bug of the proxy, not of the service.",
            "",
        ]
    passed = sorted(findings.exercised - {rule for rule, _ in findings.counts})
    lines += [f"## Rules exercised without a violation ({len(passed)})", ""]
    lines += [f"- `{rule_id}`" for rule_id in passed]
    return "\n".join(lines) + "\n"


def as_junit(findings: Findings) -> str:
    """One test case per rule the run exercised or saw violated (rfqkit/junit.py)."""
    violated: dict[str, list[Finding]] = defaultdict(list)
    for finding in findings.kept:
        violated[finding.rule].append(finding)
    counted: dict[str, int] = defaultdict(int)
    for (rule_id, _), count in findings.counts.items():
        counted[rule_id] += count
    cases = []
    for rule_id in sorted(findings.exercised | set(counted)):
        failure = None
        if rule_id in counted:
            shown = violated[rule_id][:SHOWN_PER_RULE]
            failure = (
                f"{counted[rule_id]} violations: {shown[0].message if shown else ''}",
                "\n".join(f.line() for f in shown) + "\n" + _statement(rule_id),
            )
        cases.append(junit.Case(rule_id, f"proxy.{rule_id.split('/', 1)[0]}", failure=failure))
    suite = junit.Suite("rfqsim proxy", cases, properties=[("exchanges", str(findings.exchanges))])
    return junit.render("rfqsim proxy", [suite])


def write(directory: Path, findings: Findings, upstream: str) -> None:
    """violations.json, violations.md and junit.xml in ``directory``."""
    _write(directory / "violations.json", json.dumps(as_json(findings), indent=2) + "\n")
    _write(directory / "violations.md", as_markdown(findings, upstream))
    _write(directory / "junit.xml", as_junit(findings))
