"""A finished request as one instance of a venue hands it to another's journal (JSON): what
RequestJournal.record takes, with the bodies as Latin-1 text (every byte kept) and the headers
as pairs, credential headers left out (the journal never keeps them)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from simulator.services.sim.journal_search import without_credentials

_BODIES = ("request_body", "response_body")
_HEADERS = ("request_headers", "response_headers")


def transferred(fields: Mapping[str, Any]) -> dict[str, Any]:
    """`fields` (RequestJournal.record's) as JSON-ready data."""
    data = dict(fields)
    for name in _BODIES:
        body = data.get(name)
        data[name] = None if body is None else bytes(body).decode("latin-1")
    for name in _HEADERS:
        data[name] = without_credentials(data.get(name))
    return data


def received(data: Mapping[str, Any]) -> dict[str, Any]:
    """What `transferred` made, as RequestJournal.record's fields again."""
    fields = dict(data)
    for name in _BODIES:
        text = fields.get(name)
        fields[name] = None if text is None else str(text).encode("latin-1")
    for name in _HEADERS:
        pairs = fields.get(name)
        fields[name] = None if pairs is None else [(str(n), str(v)) for n, v in pairs]
    return fields
