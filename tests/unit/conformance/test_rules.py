"""The rule list extracted from docs/spec (no server needed)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from conformance import rules as rules_module
from conformance.rules import (
    DOCUMENTS,
    Rule,
    default_spec_dir,
    load_rules,
    parse_document,
    parse_rules,
)
from conformance.rules.text import slugify

ID_PATTERN = re.compile(r"^(rfq|ramp|v1)(/[a-z0-9_][a-z0-9_-]*)+$")
TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$")
SEPARATOR = re.compile(r"^\s*\|(\s*:?-{3,}:?\s*\|)+\s*$")
LIST_ITEM = re.compile(r"^\s*(\d+\.|[-*])\s+(.*)$")


def _spec_lines(name: str) -> list[str]:
    return (default_spec_dir() / name).read_text(encoding="utf-8").splitlines()


def _body_start(lines: list[str]) -> int:
    """Index of the first ``##`` heading: what precedes it is the document's intro."""
    return next(i for i, line in enumerate(lines) if line.startswith("## "))


def _table_body_lines(lines: list[str]) -> list[int]:
    """1-based numbers of table rows that are neither a header nor a separator."""
    rows: list[int] = []
    previous_is_table = False
    for index, line in enumerate(lines):
        is_table = bool(TABLE_ROW.match(line))
        if is_table and previous_is_table and not SEPARATOR.match(line):
            rows.append(index + 1)
        previous_is_table = is_table
    return rows


def _section_table_rows(lines: list[str], heading: str) -> list[list[str]]:
    """Body rows (as cells) of the tables directly under one ``##`` heading."""
    rows: list[list[str]] = []
    inside = False
    for line in lines:
        if line.startswith("## "):
            inside = line[3:].strip() == heading
        elif line.startswith("### "):
            inside = False
        elif inside and TABLE_ROW.match(line) and not SEPARATOR.match(line):
            rows.append([c.strip() for c in line.strip().strip("|").split("|")])
    return [row for row in rows if row[0].isdigit()]


@pytest.fixture(scope="module")
def all_rules() -> tuple[Rule, ...]:
    return load_rules()


@pytest.fixture(scope="module")
def ids(all_rules: tuple[Rule, ...]) -> set[str]:
    return {rule.id for rule in all_rules}


def test_ids_are_unique(all_rules: tuple[Rule, ...]) -> None:
    listed = [rule.id for rule in all_rules]
    assert len(set(listed)) == len(listed)


def test_ids_are_short_readable_slugs(all_rules: tuple[Rule, ...]) -> None:
    bad = [rule.id for rule in all_rules if not ID_PATTERN.match(rule.id)]
    assert not bad
    too_long = [rule.id for rule in all_rules if len(rule.id) > 110]
    assert not too_long


def test_every_document_contributes(all_rules: tuple[Rule, ...]) -> None:
    counts = {key: 0 for key in DOCUMENTS.values()}
    for rule in all_rules:
        counts[rule.document] += 1
    assert all(count > 50 for count in counts.values()), counts


def test_ids_are_stable_across_parses(all_rules: tuple[Rule, ...]) -> None:
    assert tuple(parse_rules()) == all_rules


def test_load_rules_is_cached() -> None:
    assert load_rules() is load_rules()
    assert load_rules(default_spec_dir()) is load_rules()


def test_explicit_directory(tmp_path: Path, all_rules: tuple[Rule, ...]) -> None:
    for name in DOCUMENTS:
        shutil.copy(default_spec_dir() / name, tmp_path / name)
    assert [r.id for r in load_rules(tmp_path)] == [r.id for r in all_rules]


def test_missing_document_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        parse_rules(tmp_path)


@pytest.mark.parametrize(
    "rule_id",
    [
        # the examples of the scheme (docs/conformance.md)
        "rfq/errors/404-not_found",
        "rfq/resources/rfq-record/status",
        "rfq/states/quoted-post-v2-rfq-id-cancel",
        "rfq/auth/proof-of-control/rule-2",
        "rfq/overview/conventions/every-response-carries-x-request-id",
        "rfq/overview/timing-defaults/reply-budget",
        "rfq/resources/firm-quote/quote-fields/takerpays",
        "rfq/endpoints/get-v2-rfq-levels",
        "rfq/limits/outstanding-rfqs",
        "ramp/errors/409-quote_drift",
        "ramp/states/transfer-status/awaiting_funds-background-expiry",
        "ramp/states/kyc-state/pending-provider-declined",
        "ramp/endpoints/post-v2-ramp-transfers/intentkey",
        "v1/endpoints/get-v1-health",
        "v1/auth/trades-write",
        "v1/feed/get-historical_trades/query",
        "v1/errors/rates-feed-errors/body-error-string-400",
    ],
)
def test_known_ids(ids: set[str], rule_id: str) -> None:
    assert rule_id in ids


@pytest.mark.parametrize(("name", "key"), sorted(DOCUMENTS.items()))
def test_every_error_row_is_a_rule(ids: set[str], name: str, key: str) -> None:
    rows = _section_table_rows(_spec_lines(name), "Errors")
    assert rows, f"no error rows found in {name}"
    for row in rows:
        assert f"{key}/errors/{row[0]}-{row[1]}" in ids, row


@pytest.mark.parametrize(("name", "key"), sorted(DOCUMENTS.items()))
def test_every_table_row_is_a_rule(all_rules: tuple[Rule, ...], name: str, key: str) -> None:
    lines = _spec_lines(name)
    start = _body_start(lines)
    expected = {n for n in _table_body_lines(lines) if n > start}
    covered = {rule.line for rule in all_rules if rule.document == key}
    assert expected, name
    assert expected <= covered, sorted(expected - covered)


@pytest.mark.parametrize(("name", "key"), sorted(DOCUMENTS.items()))
def test_every_list_item_is_a_rule(all_rules: tuple[Rule, ...], name: str, key: str) -> None:
    lines = _spec_lines(name)
    start = _body_start(lines)
    expected = set()
    for index, line in enumerate(lines[start:], start=start):
        match = LIST_ITEM.match(line)
        # "Properties that must hold:" only introduces the items below it.
        if match and not match.group(2).rstrip().endswith(":"):
            expected.add(index + 1)
    covered = {rule.line for rule in all_rules if rule.document == key}
    assert expected <= covered, sorted(expected - covered)


@pytest.mark.parametrize(("name", "key"), sorted(DOCUMENTS.items()))
def test_every_endpoint_row_is_a_rule(ids: set[str], name: str, key: str) -> None:
    found = 0
    for line in _spec_lines(name):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if TABLE_ROW.match(line) and re.fullmatch(
            r"(GET|POST|DELETE|PUT|PATCH)(/[A-Z]+)*", cells[0]
        ):
            path = cells[1].split("?", 1)[0]
            assert f"{key}/endpoints/{slugify(cells[0] + ' ' + path)}" in ids, cells[:2]
            found += 1
    assert found >= 10


def test_intro_is_not_a_rule(all_rules: tuple[Rule, ...]) -> None:
    for name, key in DOCUMENTS.items():
        start = _body_start(_spec_lines(name))
        assert all(rule.line > start for rule in all_rules if rule.document == key)


def test_not_shown_rules(all_rules: tuple[Rule, ...]) -> None:
    by_id = {rule.id: rule for rule in all_rules}
    for rule_id in (
        "rfq/states/rule-6",
        "rfq/events/backoff-schedule-retry-count",
        "ramp/events/item-3",
        "v1/states/swap-status/transitions-between-swap-statuses",
    ):
        assert by_id[rule_id].kind == "not_shown", rule_id
    # Rows that only partly defer to "not shown" still state something testable.
    for rule_id in (
        "rfq/endpoints/get-v2-health",
        "rfq/resources/rfq-record/failreason",
        "rfq/limits/per-ip-ceiling-before-authentication",
        "v1/endpoints/get-v1-health",
    ):
        assert by_id[rule_id].kind == "rule", rule_id
    assert all("not shown" in rule.text for rule in all_rules if rule.kind == "not_shown")


def test_rule_carries_its_source(all_rules: tuple[Rule, ...]) -> None:
    rule = {r.id: r for r in all_rules}["rfq/errors/404-not_found"]
    assert rule.document == "rfq"
    assert rule.source == "1-rfq-v2.md"
    assert rule.section == "Errors"
    assert rule.row_label == "404 not_found"
    assert "No such RFQ for the caller" in rule.text
    assert _spec_lines(rule.source)[rule.line - 1].startswith("| 404 | not_found")


def test_transition_rows_that_share_a_trigger_are_told_apart(ids: set[str]) -> None:
    assert "rfq/states/soliciting-maker-replies-within-reply-budget-to-quoted" in ids
    assert "rfq/states/soliciting-maker-replies-within-reply-budget-to-no_quote" in ids


def test_duplicate_keys_get_numbered_suffixes() -> None:
    text = "\n".join(
        [
            "# Title",
            "intro",
            "## Limits",
            "",
            "| Limit | Value |",
            "|---|---|",
            "| Size | 1 |",
            "| Size | 2 |",
            "| Size | 3 |",
            "",
            "Rules:",
            "",
            "1. First rule.",
            "2. Second rule.",
            "",
            "- Label: a bullet.",
            "- Another bullet without any label here.",
        ]
    )
    parsed = parse_document("rfq", text)
    assert [r.id for r in parsed] == [
        "rfq/limits/size",
        "rfq/limits/size-2",
        "rfq/limits/size-3",
        "rfq/limits/rule-1",
        "rfq/limits/rule-2",
        "rfq/limits/label",
        "rfq/limits/another-bullet-without-any",
    ]
    assert parsed[0].text == "Limit: Size | Value: 1"
    assert [r.line for r in parsed] == [7, 8, 9, 13, 14, 16, 17]


def test_cli_lists_one_document(capsys: pytest.CaptureFixture[str]) -> None:
    assert rules_module.main(["--doc", "ramp"]) == 0
    out = capsys.readouterr().out.splitlines()
    listed = [line for line in out if not line.startswith(" ") and "/" in line]
    assert listed
    assert all(line.startswith("ramp/") for line in listed)
    assert out[-1] == f"{len(listed)} rules"
    summaries = [line for line in out if line.startswith("    ")]
    assert all(len(line) <= 4 + 80 for line in summaries)
