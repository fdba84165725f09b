"""Every check of one exchange, in one place: the service's conventions, its resources, its own
description, the client's request, the proof reasons, and the state across exchanges. Paths that
belong to no spec document (rfqsim's /_sim and /_provider, anything outside /v1, /v2 and the
feed) are forwarded and counted, never checked.
"""

from __future__ import annotations

from rfqsim.proxy import conventions, proofs, requests, resources
from rfqsim.proxy.documents import Documents
from rfqsim.proxy.exchange import ProxiedExchange
from rfqsim.proxy.findings import Findings, Inspection
from rfqsim.proxy.spec import operation_of, path_known
from rfqsim.proxy.state import State

CHECKED_SURFACES = frozenset({"rfq", "ramp", "v1", "feed"})


class Watcher:
    def __init__(self, findings: Findings, documents: Documents, state: State) -> None:
        self.findings = findings
        self.documents = documents
        self.state = state

    def inspect(self, exchange: ProxiedExchange) -> Inspection:
        """Run the checks of ``exchange`` and record what they found."""
        inspection = Inspection(exchange, self.findings.redactor)
        operation = None
        if exchange.surface in CHECKED_SURFACES:
            operation = operation_of(exchange.method, exchange.path)
            try:
                self._checks(inspection)
            except Exception:  # a bug of a check must never cost the client its answer
                self.findings.check_crashed(exchange)
        kind = operation.key if operation is not None else exchange.surface
        self.findings.record(inspection, kind)
        return inspection

    def _checks(self, inspection: Inspection) -> None:
        ex = inspection.exchange
        operation = operation_of(ex.method, ex.path)
        known = path_known(ex.path) or self.documents.knows_path(ex.path)
        requests.check(inspection, operation)  # first: the service's checks read its findings
        conventions.check(inspection, operation, known)
        proofs.check(inspection)
        if operation is not None:
            resources.check(
                inspection, operation, self.state.pair_decimals, self.state.learn_ladder
            )
            if ex.readable:
                self.documents.check(inspection, operation)
        self.state.observe(inspection, operation)
