"""Typed application keys: the only way handlers reach the long-lived parts of the simulator."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from aiohttp import web

if TYPE_CHECKING:
    from rfqkit.chain import AnvilChain
    from simulator.api.http.routes import ErrorStyle, Operation, RouteTable
    from simulator.clock import Clock
    from simulator.randomness import RandomSource
    from simulator.services.access.area import AccessArea
    from simulator.services.access.callers import Caller
    from simulator.services.access.limits import Decision
    from simulator.services.feed.area import FeedArea
    from simulator.services.limit_orders.area import BookArea
    from simulator.services.ramp.area import RampArea
    from simulator.services.rfq.area import RfqArea
    from simulator.services.rfq.pricing import LadderView
    from simulator.services.shared.changes import ChangeFeed
    from simulator.services.shared.configuration import ConfigurationReplica
    from simulator.services.shared.faults import InjectedErrors
    from simulator.services.shared.fills import FillFanout, IndexProgress
    from simulator.services.shared.health import DependencyHealth
    from simulator.services.shared.history import HistoryFile
    from simulator.services.shared.idempotency import IdempotencyLedger
    from simulator.services.shared.maker_names import MakerNames
    from simulator.services.shared.timelines import Timelines
    from simulator.services.shared.venue import VenueDirectory
    from simulator.services.sim.durable import DurableConfiguration
    from simulator.services.sim.full_collections import FullCollectionSchedule
    from simulator.services.sim.gc_pauses import GcPauseRecorder
    from simulator.services.sim.instances import InstanceRoster
    from simulator.services.sim.journal import RequestJournal
    from simulator.services.sim.scenario import ScenarioRunner
    from simulator.services.sim.state import StateControl
    from simulator.services.sim.wallets import WalletBalances
    from simulator.services.swaps.area import SwapsArea
    from simulator.services.v1.area import V1Area
    from simulator.services.webhooks.service import Webhooks
    from simulator.settings import ChainEnvironment, Settings


class MakerSessions(Protocol):
    """Runs one maker's session on a socket the maker-stream handler has upgraded, until it
    closes (adapters/rfq/maker_stream.py); the handler has checked the credential."""

    async def serve(
        self,
        ws: web.WebSocketResponse,
        *,
        maker_id: str,
        wallet: str,
        environment: ChainEnvironment,
        fills_book: bool = False,
        relay_headers: Mapping[str, str] | None = None,
    ) -> None: ...

    async def close_all(self, *, timeout_s: float) -> None:
        """The server stops: end every open socket with its closing handshake."""
        ...

    async def linked(self, instances: set[int], timeout_s: float) -> bool:
        """Several instances: every maker connected here has a link to each of `instances`."""
        ...


SETTINGS: web.AppKey[Settings] = web.AppKey("settings")
CLOCK: web.AppKey[Clock] = web.AppKey("clock")
RANDOM: web.AppKey[RandomSource] = web.AppKey("random")
ROUTES: web.AppKey[RouteTable] = web.AppKey("routes")
VENUE: web.AppKey[VenueDirectory] = web.AppKey("venue")
ACCESS: web.AppKey[AccessArea] = web.AppKey("access")
RFQ: web.AppKey[RfqArea] = web.AppKey("rfq")
CHAINS: web.AppKey[dict[int, AnvilChain]] = web.AppKey("chains")  # filled at start-up
WEBHOOKS: web.AppKey[Webhooks] = web.AppKey("webhooks")  # registry, outbox, worker
RAMP: web.AppKey[RampArea] = web.AppKey("ramp")  # the fiat ramp's services and provider ports
HEALTH: web.AppKey[DependencyHealth] = web.AppKey("health")  # dependencies, as last seen
BOOK: web.AppKey[BookArea] = web.AppKey("book")  # v1 resting orders (limit orders)
SWAPS: web.AppKey[SwapsArea] = web.AppKey("swaps")  # v1 instant swaps
# Several instances: the venue's count of injected 500s (None: one process, Faults counts)
INJECTED_ERRORS: web.AppKey[InjectedErrors | None] = web.AppKey("injected_errors")
MAKER_SESSIONS: web.AppKey[MakerSessions] = web.AppKey("maker_sessions")  # /v2/maker/stream
FEED: web.AppKey[FeedArea] = web.AppKey("feed")  # the public rates feed
FILLS: web.AppKey[FillFanout] = web.AppKey("fills")  # every reactor fill, to each subscriber
FILL_INDEX: web.AppKey[IndexProgress] = web.AppKey("fill_index")  # the indexers' progress
# Paths whose errors are not rendered as the v2 envelope: the feed's `{error: "<string>"}`.
ERROR_STYLES: web.AppKey[dict[str, ErrorStyle]] = web.AppKey("error_styles")
OPERATIONS: web.AppKey[dict[str, Operation]] = web.AppKey("operations")  # by operation id
V1: web.AppKey[V1Area] = web.AppKey("v1")  # /v1/status and /v1/corridors
IDEMPOTENCY: web.AppKey[IdempotencyLedger] = web.AppKey("idempotency")  # Idempotency-Key records
# The venue's configuration shared with the other instances (None: one instance).
CONFIGURATION: web.AppKey[ConfigurationReplica | None] = web.AppKey("configuration")
INSTANCES: web.AppKey[InstanceRoster] = web.AppKey("instances")  # the venue's live instances
STATE: web.AppKey[StateControl] = web.AppKey("state_control")  # reset, snapshots, state dir
JOURNAL: web.AppKey[RequestJournal] = web.AppKey("journal")  # /_sim/requests (absent: off)
SCENARIOS: web.AppKey[ScenarioRunner] = web.AppKey("scenarios")  # /_sim/scenarios
CHANGES: web.AppKey[ChangeFeed] = web.AppKey("changes")  # what changed: the console's live stream
MAKER_NAMES: web.AppKey[MakerNames] = web.AppKey("maker_names")  # the fleet's wallet -> name
WALLET_BALANCES: web.AppKey[WalletBalances] = web.AppKey("wallet_balances")  # GET /_sim/chains
# Every area's bounded history by topic (rfqs, swaps, limit-orders, transfers): GET /_sim/rfqs...
TIMELINES: web.AppKey[dict[str, Timelines]] = web.AppKey("timelines")
HISTORY: web.AppKey[HistoryFile] = web.AppKey("history")  # what is at rest, out of memory
# Keys, limits and webhook endpoints in the history file as they change (with a state dir).
DURABLE: web.AppKey[DurableConfiguration] = web.AppKey("durable")
GC_PAUSES: web.AppKey[GcPauseRecorder] = web.AppKey("gc_pauses")  # GET /_sim/runtime
# Present while the simulator schedules full collections itself (collector.full_collections).
FULL_COLLECTIONS: web.AppKey[FullCollectionSchedule] = web.AppKey("full_collections")

# Rendered ladder JSON per chain, with the cached view it was rendered from.
LADDER_BYTES: web.AppKey[dict[int, tuple[LadderView, bytes]]] = web.AppKey("ladder_bytes")
# Rendered order-book offers per direction and query, with the ranking they were rendered from.
V1_BOOK_BYTES: web.AppKey[dict[tuple[object, ...], tuple[list[Any], bytes, str, str]]] = web.AppKey(
    "v1_book_bytes"
)
OPENAPI_CACHE: web.AppKey[dict[str, bytes]] = web.AppKey("openapi_cache")  # rendered once

REQUEST_ID: web.RequestKey[str] = web.RequestKey("request_id")  # this request's id
CALLER: web.RequestKey[Caller] = web.RequestKey("caller")  # set by the access middleware
# perf_counter() when the error middleware (the outermost) took the request: Server-Timing `sim`
REQUEST_STARTED: web.RequestKey[float] = web.RequestKey("request_started")
# Seconds a firm request waited for makers, set by its handler: Server-Timing `makers`
MAKER_WAIT_S: web.RequestKey[float] = web.RequestKey("maker_wait_s")
MAKER_WAITS: web.RequestKey[list[str]] = web.RequestKey("maker_waits")  # Server-Timing entries
RATE_DECISION: web.RequestKey[Decision] = web.RequestKey(
    "rate_decision"
)  # per-key limiter's verdict
