"""The shared engine of several instances (`--redis-url`): built with the app when configured,
the venue's clock followed while the app runs, closed after everything that writes through it
has stopped. Without it (one instance) every store stays in memory and this adds nothing."""

from __future__ import annotations

from collections.abc import AsyncIterator

from aiohttp import web

from rfqkit.tasks import running
from simulator.adapters.redis.clock import SharedClockOffset
from simulator.adapters.redis.configuration import SharedConfiguration
from simulator.adapters.redis.engine import SharedEngine
from simulator.adapters.redis.roster import SharedRoster
from simulator.adapters.webhooks.venue_events import EventsToFirstInstance
from simulator.api.http.appkeys import CLOCK, CONFIGURATION, INSTANCES, JOURNAL
from simulator.api.http.forwarding import FORWARDING
from simulator.settings import Settings

SHARED_ENGINE: web.AppKey[SharedEngine | None] = web.AppKey("shared_engine")
# Several instances: the events made here, for the venue's webhook worker (the first instance)
VENUE_EVENTS: web.AppKey[EventsToFirstInstance] = web.AppKey("venue_events")


def shared_engine(settings: Settings) -> SharedEngine | None:
    url = settings.shared.redis_url
    return SharedEngine(url, prefix=settings.shared.key_prefix) if url else None


async def shared_engine_context(app: web.Application) -> AsyncIterator[None]:
    """With an engine: the clock and the configuration follow the venue's (the clock joined
    before the app serves, the configuration once start-up made its keys: cli.serve), and the
    engine is closed last."""
    engine = app[SHARED_ENGINE]
    if engine is None:
        yield
        return
    offset = SharedClockOffset(engine, app[CLOCK])
    offset.join()
    app[CLOCK].add_listener(offset.advanced)
    configuration = app[CONFIGURATION]
    assert isinstance(configuration, SharedConfiguration)
    configuration.join()  # before start-up makes keys: the venue's partners are reused
    roster = app[INSTANCES]
    assert isinstance(roster, SharedRoster)
    async with (
        running(offset.follow(), name="clock-follow"),
        running(configuration.follow(), name="configuration-follow"),
        running(roster.keep_alive(), name="instance-lease"),
    ):
        yield
    roster.leave()
    forwarding = app[FORWARDING]
    if forwarding is not None:
        await forwarding.aclose()
    if VENUE_EVENTS in app:
        await app[VENUE_EVENTS].aclose()
    if JOURNAL in app and (relay := app[JOURNAL].relay) is not None:
        await relay.aclose()
    app[CLOCK].remove_listener(offset.advanced)
    await engine.aclose()
