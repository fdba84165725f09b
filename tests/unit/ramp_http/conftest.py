"""Fixtures of the ramp HTTP-edge tests: ``edge``, the app in the test environment, and
``production``, the app started with ``environment: production``; each with the fake provider
attached and a fresh wallet (tests/unit/ramp_http/edge.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.unit.ramp_http.edge import Edge
from tests.unit.services.ramp_harness import serve_ramp


@pytest.fixture
async def edge() -> AsyncIterator[Edge]:
    async with serve_ramp() as client:
        yield Edge(client)


@pytest.fixture
async def production() -> AsyncIterator[Edge]:
    async with serve_ramp({"environment": "production"}) as client:
        yield Edge(client)
