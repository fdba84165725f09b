"""Keys, limits and webhook endpoints written to the history file as they change, with a state
directory (services/sim/durable.py): a task every `state.durable_interval_s`, and once more
when the app stops, before the file is closed. Without a state directory nothing runs: the
file is temporary and nothing outlives the process anyway."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

from aiohttp import web

from rfqkit.tasks import running, step_forever
from simulator.api.http.appkeys import CLOCK, DURABLE, SETTINGS

log = logging.getLogger("rfqsim.state")


async def durable_context(app: web.Application) -> AsyncIterator[None]:
    if app[SETTINGS].state.dir is None:
        yield
        return
    durable = app[DURABLE]

    async def save() -> None:
        if changed := durable.save_changed():
            log.debug("configuration written to the history file: %s", ", ".join(changed))

    periodic = step_forever(
        app[CLOCK],
        save,
        lambda: None,
        max_sleep_s=app[SETTINGS].state.durable_interval_s,
        log=log,
        what="configuration writes",
    )
    async with running(periodic, name="durable-configuration"):
        yield
    durable.save_changed()  # what changed since the last tick: the file closes after this
