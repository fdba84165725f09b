"""The venue's count of injected 500s on the shared engine (services/shared/faults.py
`InjectedErrors`): key `faults:internal-errors` under the engine's prefix, taken one at a time
by one script, so "the next N requests answer 500" holds at the venue, wherever they arrive."""

from __future__ import annotations

from simulator.adapters.redis.engine import UNREACHABLE, SharedEngine, unreachable

_TAKE = """
local left = tonumber(redis.call('GET', ARGV[1]) or '0')
if left <= 0 then return 0 end
redis.call('DECR', ARGV[1])
return 1
"""
_SET = "redis.call('SET', ARGV[1], ARGV[2])"


class SharedInjectedErrors:
    def __init__(self, engine: SharedEngine) -> None:
        self._key = engine.prefix + "faults:internal-errors"
        self._writes = engine.ordered_writes()
        self._take = engine.script(_TAKE)
        self._set = engine.script(_SET)

    async def take(self) -> bool:
        try:
            return bool(await self._writes.then(self._take, [self._key]))
        except UNREACHABLE as exc:
            raise unreachable(exc) from exc

    def set(self, count: int) -> None:
        self._writes.put(self._set, [self._key, str(count)])
