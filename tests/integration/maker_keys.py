"""Maker credentials made through /_sim/keys for the stream tests (the maker stream's own, and
through rfqsim proxy)."""

from __future__ import annotations

from typing import Any

import aiohttp


async def create_key(session: aiohttp.ClientSession, api: str, **body: Any) -> str:
    async with session.post(f"{api}/_sim/keys", json=body) as resp:
        assert resp.status == 201, await resp.text()
        return str((await resp.json())["data"]["key"])
