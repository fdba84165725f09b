"""The shared engine of several instances (`--redis-url`): built with the app when configured,
closed after everything that writes through it has stopped. Without it (one instance) every
store stays in memory and this adds nothing."""

from __future__ import annotations

from collections.abc import AsyncIterator

from aiohttp import web

from simulator.adapters.redis.engine import SharedEngine
from simulator.settings import Settings

SHARED_ENGINE: web.AppKey[SharedEngine | None] = web.AppKey("shared_engine")


def shared_engine(settings: Settings) -> SharedEngine | None:
    url = settings.shared.redis_url
    return SharedEngine(url, prefix=settings.shared.key_prefix) if url else None


async def shared_engine_context(app: web.Application) -> AsyncIterator[None]:
    yield
    engine = app[SHARED_ENGINE]
    if engine is not None:
        await engine.aclose()
