"""Schema-scoped schemathesis hooks of the run (registered on one loaded schema, never globally).

* :class:`DeviationFilter` (``filter_failure``): drops a failure only when an entry of the
  reviewed deviations file matches it, and counts the match. A dropped failure does not stop
  generation for its operation, so an accepted deviation cannot hide a different failure.
* :class:`ProofSigner` (``map_case``): keyless pass only; a positive ``POST /v2/rfq/request``
  case naming the run's taker gets a fresh, valid ``takerProof`` (random nonce, service time),
  as a wallet app would send it. Negative cases are left exactly as generated.
* :class:`CorridorSteering` (``map_case``): a positive preview or firm request whose tokens both
  come from the served set gets a served sell/buy direction (see the class).
* :class:`WebhookJanitor` (``after_call``): remembers every endpoint the run registers, keeps at
  most :data:`MAX_LIVE_ENDPOINTS` of them (the registry caps a partner at 16) and deletes the
  rest at the end, so the run leaves nothing behind.
"""

from __future__ import annotations

import threading
from collections import deque
from typing import Any

from schemathesis.generation import GenerationMode

from conformance.schema.auth import RunCredentials
from conformance.schema.deviations import DeviationSet, Observed
from conformance.wire.client import Client

RFQ_REQUEST = "POST /v2/rfq/request"
STEERED = (RFQ_REQUEST, "POST /v2/rfq/preview")
WEBHOOKS_CREATE = "POST /v1/webhooks"
MAX_LIVE_ENDPOINTS = 8


class DeviationFilter:
    """``filter_failure``: keep a failure unless a reviewed deviation matches it."""

    def __init__(self, deviations: DeviationSet, labels: dict[str, str], caller: str) -> None:
        self.deviations = deviations
        self.labels = labels  # schemathesis label -> operationId
        self.caller = caller  # keyed | keyless

    def __call__(self, context: Any, failure: Any, case: Any, response: Any) -> bool:
        label = str(case.operation.label)
        content = getattr(response, "content", None)
        code, reason, issues = Observed.error_fields(content)
        seen = Observed(
            operation=self.labels.get(label, label),
            checks=tuple(getattr(type(failure), "checks", ()) or ()),
            status=getattr(response, "status_code", None),
            error_code=code,
            error_reason=reason,
            issues=issues,
            failure_title=str(failure.title),
            failure_message=str(failure.message),
            caller=self.caller,
            error_text=Observed.error_text_of(content),
        )
        example = f"{label} -> {seen.status}: {failure.title}"  # no bodies: no secrets
        return self.deviations.match(seen, example) is None


class ProofSigner:
    """``map_case``: sign a fresh takerProof into positive keyless firm requests."""

    def __init__(self, caller: RunCredentials) -> None:
        self.caller = caller
        self.signed = 0

    def __call__(self, context: Any, case: Any) -> Any:
        if str(case.operation.label) != RFQ_REQUEST or not isinstance(case.body, dict):
            return case
        meta = case.meta
        if meta is None or meta.generation.mode != GenerationMode.POSITIVE:
            return case
        taker, chain_id = case.body.get("taker"), case.body.get("chainId")
        if not isinstance(taker, str) or taker.lower() != self.caller.taker.address.lower():
            return case
        if not isinstance(chain_id, int) or isinstance(chain_id, bool) or chain_id < 1:
            return case
        case.body["takerProof"] = self.caller.proof(chain_id)
        self.signed += 1
        return case


class CorridorSteering:
    """``map_case``: pair a positive case's corridor tokens into a direction the service serves.

    The dictionaries put served tokens into ``sellToken`` and ``buyToken`` independently, and a
    JSON schema cannot say which pairs form a corridor (deployment data, spec: "must differ and
    form an enabled RFQ corridor"). When both tokens came from the served set on a served chain
    but do not form a served direction, ``buyToken`` becomes a counter-token of ``sellToken``.
    Nothing else is touched (amounts stay as generated), and unserved tokens stay unserved, so
    the service's own 400s for those remain exercised.
    """

    def __init__(self, caller: RunCredentials) -> None:
        directions: dict[tuple[int, str], list[str]] = {}
        for corridor in caller.corridors:
            key = (corridor.chain_id, corridor.sell_token.lower())
            directions.setdefault(key, []).append(corridor.buy_token)
        self.directions = directions
        self.tokens = {t.lower() for t in caller.tokens()}
        self.steered = 0

    def __call__(self, context: Any, case: Any) -> Any:
        if str(case.operation.label) not in STEERED or not isinstance(case.body, dict):
            return case
        # Dictionary draws replace single values after generation, judged only against their
        # own field's schema; re-assigning the body makes schemathesis judge the whole body
        # again, so a draw that breaks a cross-field rule of the document (exactly one amount)
        # turns the case negative instead of passing for schema-valid.
        case.body = case.body
        meta = case.meta
        if meta is None or meta.generation.mode != GenerationMode.POSITIVE:
            return case
        sell, buy, chain_id = (case.body.get(k) for k in ("sellToken", "buyToken", "chainId"))
        if not (isinstance(sell, str) and isinstance(buy, str) and isinstance(chain_id, int)):
            return case
        if sell.lower() not in self.tokens or buy.lower() not in self.tokens:
            return case
        partners = self.directions.get((chain_id, sell.lower()))
        if not partners or buy.lower() in {p.lower() for p in partners}:
            return case
        # Deterministic for a given case: the generated buy token picks among the partners.
        case.body["buyToken"] = partners[int(buy, 16) % len(partners)]
        self.steered += 1
        return case


class WebhookJanitor:
    """``after_call``: track endpoints the run registered; keep few alive; delete them all after."""

    def __init__(self, client: Client, api_key: str) -> None:
        self.client = client.with_headers({"Authorization": f"Bearer {api_key}"})
        self.live: deque[str] = deque()
        self.created = 0
        self._lock = threading.Lock()

    def __call__(self, context: Any, case: Any, response: Any) -> None:
        if str(case.operation.label) != WEBHOOKS_CREATE or response.status_code != 201:
            return
        try:
            endpoint_id = response.json()["data"]["id"]
        except (ValueError, KeyError, TypeError):
            return  # response_schema_conformance reports a malformed body
        with self._lock:
            self.created += 1
            self.live.append(str(endpoint_id))
            excess = [self.live.popleft() for _ in range(len(self.live) - MAX_LIVE_ENDPOINTS)]
        for old in excess:
            self._delete(old)

    def _delete(self, endpoint_id: str) -> None:
        # 200, or 404 when the run already deleted it through the DeleteWebhook link.
        self.client.delete(f"/v1/webhooks/{endpoint_id}")

    def cleanup(self) -> None:
        with self._lock:
            remaining, self.live = list(self.live), deque()
        for endpoint_id in remaining:
            self._delete(endpoint_id)
