"""How a run through `rfqsim proxy` (`--through-proxy`) is judged from the proxies' reports:
no fault of the service, and every broken request the suite sent refused."""

from __future__ import annotations

from typing import Any

from conformance.wire.proxy_process import findings_of, verdict


def violation(
    side: str, status: int, rule: str = "rfq/errors/400-invalid_request"
) -> dict[str, Any]:
    return {
        "rule": rule,
        "side": side,
        "method": "POST",
        "path": "/v2/rfq/request",
        "status": status,
        "request_id": "req_1",
        "message": "amounts are strings",
        "request": {},
        "response": {},
    }


def report(*violations: dict[str, Any], exchanges: int = 10) -> dict[str, Any]:
    return {
        "exchanges": exchanges,
        "rules_exercised": ["a", "b"],
        "violations": list(violations),
    }


def test_refused_client_findings_only_pass_and_are_counted() -> None:
    passed, lines = verdict(
        [findings_of(report(violation("client", 400))), findings_of(report(exchanges=5))]
    )
    assert passed
    assert lines == [
        "through rfqsim proxy: 15 exchanges, 2 rules exercised, 0 faults of the service, "
        "1 client findings (0 of them accepted by the service)"
    ]


def test_a_fault_of_the_service_fails_and_is_named() -> None:
    passed, lines = verdict([findings_of(report(violation("service", 200, "rfq/x")))])
    assert not passed
    assert lines[1] == "  service rfq/x POST /v2/rfq/request -> 200: amounts are strings"


def test_a_broken_request_the_service_accepted_fails() -> None:
    passed, lines = verdict([findings_of(report(violation("client", 200)))])
    assert not passed
    assert "(1 of them accepted by the service)" in lines[0]
    assert lines[1].startswith("  client rfq/errors/400-invalid_request POST")
