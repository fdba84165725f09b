"""The shared engine of several instances (`--redis-url`): built with the app when configured,
the venue's clock followed while the app runs, closed after everything that writes through it
has stopped. Without it (one instance) every store stays in memory and this adds nothing."""

from __future__ import annotations

from collections.abc import AsyncIterator

from aiohttp import web

from rfqkit.tasks import running
from simulator.adapters.redis.clock import SharedClockOffset
from simulator.adapters.redis.engine import SharedEngine
from simulator.api.http.appkeys import CLOCK
from simulator.settings import Settings

SHARED_ENGINE: web.AppKey[SharedEngine | None] = web.AppKey("shared_engine")


def shared_engine(settings: Settings) -> SharedEngine | None:
    url = settings.shared.redis_url
    return SharedEngine(url, prefix=settings.shared.key_prefix) if url else None


async def shared_engine_context(app: web.Application) -> AsyncIterator[None]:
    """With an engine: the clock follows the venue's (joined before the app serves, then every
    advance of any instance), and the engine is closed last."""
    engine = app[SHARED_ENGINE]
    if engine is None:
        yield
        return
    offset = SharedClockOffset(engine, app[CLOCK])
    offset.join()
    app[CLOCK].add_listener(offset.advanced)
    async with running(offset.follow(), name="clock-follow"):
        yield
    app[CLOCK].remove_listener(offset.advanced)
    await engine.aclose()
