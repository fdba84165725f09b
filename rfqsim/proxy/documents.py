"""Each answer against the service's own machine-readable description of its operation and
status, as the conformance suite's schemathesis run checks it (status documented, body valid for
the documented schema, with the same validator, jsonschema-rs): the documents are the upstream's
``/v2/openapi.json`` (the spec's "machine-readable description of v2"), ``/v1/openapi.json`` and
the feed's ``/feed/openapi.json`` when it has them, read once through the proxy's own session.

The spec lets a body carry fields it does not name, so ``additionalProperties: false`` and
``unevaluatedProperties: false`` of a document are not held against an answer.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import jsonschema_rs

from conformance.wire.openapi_checks import operations, resolve
from rfqsim.proxy.findings import Inspection
from rfqsim.proxy.spec import SpecOperation

MAX_ERRORS_SHOWN = 3
_PARAMETER = re.compile(r"\\\{[^}]+\\\}")
_CLOSED = ("additionalProperties", "unevaluatedProperties")
LOCAL_REF = '"#/components/'  # a $ref into the document's own components, as JSON text


def _opened(node: Any) -> Any:
    """A schema with every closing of its objects to unnamed fields removed."""
    if isinstance(node, dict):
        return {k: _opened(v) for k, v in node.items() if not (k in _CLOSED and v is False)}
    if isinstance(node, list):
        return [_opened(item) for item in node]
    return node


@dataclass
class Documented:
    """One operation of a document: its responses by status key (``200``, ``4XX``,
    ``default``) and the validators of their JSON bodies, which resolve the document's
    components through one registry per document (so each component is held once)."""

    method: str
    template: str
    pattern: re.Pattern[str]
    responses: Mapping[str, Any]
    registry: jsonschema_rs.Registry
    uri: str  # the document's components' address in the registry
    literal_segments: int
    validators: dict[str, jsonschema_rs.Validator | None] = field(default_factory=dict)

    def response_for(self, status: int) -> tuple[str, Any] | None:
        for key in (str(status), f"{status // 100}XX", "default"):
            if key in self.responses:
                return key, self.responses[key]
        return None

    def validator(self, key: str, response: Any) -> jsonschema_rs.Validator | None:
        if key not in self.validators:
            content = response.get("content") if isinstance(response, Mapping) else None
            media = (content or {}).get("application/json")
            schema = media.get("schema") if isinstance(media, Mapping) else None
            if schema is None:
                self.validators[key] = None
            else:
                text = json.dumps(_opened(schema)).replace(LOCAL_REF, f'"{self.uri}#/components/')
                self.validators[key] = jsonschema_rs.Draft202012Validator(
                    json.loads(text), registry=self.registry
                )
        return self.validators[key]


class Documents:
    """The upstream's descriptions, once loaded (:meth:`load` with each parsed document)."""

    def __init__(self) -> None:
        self.operations: list[Documented] = []
        self.loaded: list[str] = []  # the paths that were read

    def load(self, path: str, document: Mapping[str, Any]) -> None:
        uri = f"urn:rfqsim-proxy:{path}"
        components = _opened(document.get("components") or {})
        registry = jsonschema_rs.Registry([(uri, {"components": components})])
        for template, method, operation in operations(document):
            regex = "^" + _PARAMETER.sub("[^/]+", re.escape(template)) + "$"
            responses = {
                str(k).upper(): resolve(document, v)
                for k, v in (operation.get("responses") or {}).items()
            }
            literal = sum(1 for s in template.split("/") if s and not s.startswith("{"))
            documented = Documented(
                method, template, re.compile(regex), responses, registry, uri, literal
            )
            # Built now, not at an answer's first check: a large schema takes milliseconds
            # to compile, which would land on one unlucky request.
            for key, response in responses.items():
                documented.validator(key, response)
            self.operations.append(documented)
        # More literal segments first: /v2/rfq/levels before /v2/rfq/{rfqId}.
        self.operations.sort(key=lambda o: -o.literal_segments)
        self.loaded.append(path)

    def find(self, method: str, path: str) -> list[Documented]:
        """Every loaded document's description of the operation at `path` (an operation two
        specs share, /v1/webhooks, is in two documents), the most literal first."""
        found: list[Documented] = []
        for documented in self.operations:
            if documented.method == method and documented.pattern.match(path):
                if found and documented.literal_segments < found[0].literal_segments:
                    break  # a templated sibling of the operation found (/v2/rfq/{rfqId})
                found.append(documented)
        return found

    def knows_path(self, path: str) -> bool:
        return any(documented.pattern.match(path) for documented in self.operations)

    def check(self, inspection: Inspection, operation: SpecOperation) -> None:
        """The answer's status is documented for its operation and its JSON body is valid
        for the documented schema (under the operation's endpoint rule)."""
        ex = inspection.exchange
        described = self.find(ex.method, ex.path)
        if not described:
            return
        # The status as any document describing the operation documents it (the v1 document
        # adds the Idempotency-Key's 409 to /v1/webhooks, which spec 1 lists without it).
        answered = [(d, d.response_for(ex.status)) for d in described]
        documented, found = next(((d, f) for d, f in answered if f is not None), answered[0])
        if found is None:
            listed = ", ".join(sorted({key for d in described for key in d.responses}))
            inspection.fail(
                operation.rule,
                f"HTTP {ex.status} is not a documented answer of {ex.method} "
                f"{documented.template} (documented: {listed})",
            )
            return
        if not ex.readable or not ex.response.is_json:
            inspection.check(operation.rule, lambda: None)
            return
        key, response = found
        validator = documented.validator(key, response)
        if validator is None:
            inspection.check(operation.rule, lambda: None)
            return
        body = ex.response.body
        inspection.check(operation.rule, lambda: _valid(validator, body, documented, key))


def _valid(validator: jsonschema_rs.Validator, body: Any, documented: Documented, key: str) -> None:
    if validator.is_valid(body):
        return
    errors = []
    for error in validator.iter_errors(body):
        where = "/".join(str(p) for p in error.instance_path) or "(body)"
        errors.append(f"{where}: {error.message}")
        if len(errors) == MAX_ERRORS_SHOWN:
            break
    raise AssertionError(
        f"the answer does not match the documented {key} schema of {documented.method} "
        f"{documented.template}: " + "; ".join(errors)
    )
