"""One request journal entry's fields as the gate records them, for the journal and its archive
tests."""

from __future__ import annotations


def request_fields(index: int, at: float) -> dict[str, object]:
    """A plain GET's fields as the journal middleware records them."""
    return {
        "request_id": f"req_{index}",
        "at": at,
        "method": "GET",
        "path": "/v2/rfq/levels",
        "query": "",
        "status": 200,
        "latency_ms": 1.0,
        "key_prefix": None,
        "request_type": None,
        "request_body": None,
        "request_size": 0,
        "response_body": None,
        "response_size": 0,
    }
