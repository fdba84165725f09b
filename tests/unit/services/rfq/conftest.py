from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.unit.services.rfq.harness import RfqHarness


@pytest.fixture
async def rfq() -> AsyncIterator[RfqHarness]:
    harness = RfqHarness()
    yield harness
    await harness.settled_makers()  # no maker answer left running past the test
