"""GET /_sim/rfqs, /_sim/swaps, /_sim/limit-orders, /_sim/transfers (newest first, filtered) and
GET /_sim/<kind>/{id}: one object's timeline, read from the area's bounded history
(services/shared/timelines.py). Rendering happens here, on read: ISO times, the fleet's names
for maker wallets, and the webhook deliveries of the events an object produced."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from rfqkit.timestamps import isoformat_unix
from simulator.api.http.appkeys import MAKER_NAMES, TIMELINES, WEBHOOKS
from simulator.api.http.cursors import decode_cursor, encode_cursor
from simulator.api.http.forwarding import FORWARDING, Forwarding, repeated
from simulator.api.http.parsing import parse_query
from simulator.api.http.responses import data_response
from simulator.api.http.routes import RouteTable
from simulator.api.sim import timeline_schemas as schemas
from simulator.api.webhooks.schemas import DeliveryView
from simulator.errors import InternalError, InvalidRequest, NotFound, VenueUnavailable
from simulator.services.limit_orders.history import LIMIT_ORDER_STEPS
from simulator.services.ramp.history import TRANSFER_STEPS
from simulator.services.rfq.history import RFQ_STEPS
from simulator.services.shared.maker_names import MakerNames
from simulator.services.shared.timeline_search import TimelineFilter, key_of, search
from simulator.services.shared.timelines import (
    StepKinds,
    Timeline,
    Timelines,
    render_steps,
    time_fields,
)
from simulator.services.swaps.history import SWAP_STEPS


@dataclass(frozen=True)
class TimelineKind:
    topic: str  # the history's name, the path segment and the live stream's event name
    noun: str  # for summaries: "RFQ"
    operation: str  # operation id stem: Rfq -> simListRfqs, simGetRfq
    steps: StepKinds  # the area's step table
    # Of several instances, kept where each object was made (RFQs): a list gathers every
    # instance's part. Else all at the venue's first instance.
    spread: bool = False
    models: dict[str, type[schemas.StepModel]] = field(init=False)  # its steps' models, by kind
    detail: type[schemas.TimelineItem] = field(init=False)  # one object's timeline

    def __post_init__(self) -> None:
        models = schemas.step_models(self.steps)
        object.__setattr__(self, "models", models)
        object.__setattr__(self, "detail", schemas.detail_model(self.operation, models))


KINDS: tuple[TimelineKind, ...] = (
    TimelineKind("rfqs", "RFQ", "Rfq", RFQ_STEPS, spread=True),
    TimelineKind("swaps", "v1 swap", "Swap", SWAP_STEPS),
    TimelineKind("limit-orders", "v1 limit order", "LimitOrder", LIMIT_ORDER_STEPS),
    TimelineKind("transfers", "ramp transfer", "Transfer", TRANSFER_STEPS),
)


def _refs(wallets: Iterable[str], names: MakerNames) -> list[dict[str, Any]]:
    return [{"wallet": w, "name": names.name_of(w)} for w in wallets]


def _is_time(key: str) -> bool:
    return key == "at" or key.endswith("_at")


def _times(values: dict[str, Any]) -> dict[str, Any]:
    """Simulator times (`*_at` floats) as the API's ISO strings."""
    return {
        key: isoformat_unix(value)
        if _is_time(key) and isinstance(value, int | float) and not isinstance(value, bool)
        else value
        for key, value in values.items()
    }


def item_json(timeline: Timeline, names: MakerNames) -> dict[str, Any]:
    """A list item as JSON-ready data, built without a model: the live stream sends one per
    changed object, many a second (`render_item` is the same through the model)."""
    summary = _times(timeline.summary)
    wallets = summary.pop("makers", [])
    summary.pop("maker_ids", None)  # what `maker=` matches; the wallets say who
    if "winners" in summary:
        summary["winners"] = _refs(summary["winners"], names)
    return {
        "id": timeline.object_id,
        "created_at": isoformat_unix(timeline.created_at) or "",
        "status": timeline.status,
        "makers": _refs(wallets, names),
        "summary": summary,
    }


def render_item(timeline: Timeline, names: MakerNames) -> schemas.TimelineItem:
    return schemas.TimelineItem.model_validate(item_json(timeline, names))


def _step_times(step: dict[str, Any], kinds: StepKinds) -> dict[str, Any]:
    """A step's simulator times (its `at` and the fields its type says are `SimTime`) as the
    API's ISO strings."""
    step_type = kinds.types.get(step["kind"])
    times = frozenset() if step_type is None else time_fields(step_type)
    return {
        key: isoformat_unix(value)
        if key in times and isinstance(value, int | float) and not isinstance(value, bool)
        else value
        for key, value in step.items()
    }


def _step(step: dict[str, Any], kind: TimelineKind, names: MakerNames) -> schemas.StepModel:
    out = _step_times(step, kind.steps)
    if isinstance(out.get("maker"), str):
        out["maker_name"] = names.name_of(out["maker"])
    if isinstance(out.get("winners"), list):
        out["winners"] = _refs(out["winners"], names)
    if isinstance(out.get("losers"), list):
        # [wallet, why, vs_winner_bps]; a step kept by an older version has no third value
        out["losers"] = [
            {
                "wallet": wallet,
                "name": names.name_of(wallet),
                "why": why,
                "vs_winner_bps": behind[0] if behind else None,
            }
            for wallet, why, *behind in out["losers"]
        ]
    return schemas.read_step(kind.models[out["kind"]], out)


def render_detail(
    timeline: Timeline,
    timelines: Timelines,
    kind: TimelineKind,
    names: MakerNames,
    request: web.Request,
) -> schemas.TimelineItem:
    item = render_item(timeline, names)
    # A step of a kind no longer recorded (an older version's) has no model: left out.
    steps = [s for s in render_steps(timeline, timelines.kinds) if s["kind"] in kind.models]
    outbox = request.app[WEBHOOKS].outbox
    deliveries = [
        DeliveryView.model_validate(delivery)
        for step in steps
        if step["kind"] == "event"
        for delivery in outbox.find(event_id=step["id"])
    ]
    return kind.detail.model_validate(
        {
            **item.model_dump(),
            "steps": [_step(s, kind, names) for s in steps],
            "webhooks": deliveries,
        }
    )


def _filter(query: schemas.TimelineQuery, names: MakerNames) -> TimelineFilter:
    makers = None
    if query.maker is not None:
        wanted = {query.maker.lower()}
        wallet = names.wallet_of(query.maker)
        if wallet is not None:
            wanted.add(wallet.lower())
        makers = frozenset(wanted)
    return TimelineFilter(
        status=None if query.status is None else query.status.lower(),
        taker=None if query.taker is None else query.taker.lower(),
        makers=makers,
        pair=None if query.pair is None else query.pair.lower(),
        since=None if query.since is None else query.since.timestamp(),
        until=None if query.until is None else query.until.timestamp(),
        before=None if query.cursor is None else decode_cursor(query.cursor, str),
    )


# Of several instances: each listed item's key (created_at, id), in the answer to the venue's
# first instance gathering a list, so its merge pages by the exact keys the cursor names.
KEYS_HEADER = "X-Rfqsim-List-Keys"

Keyed = list[tuple[tuple[float, str], dict[str, Any]]]  # (key, item as JSON-ready data)


def _list_handler(kind: TimelineKind) -> Any:
    async def handler(request: web.Request) -> web.Response:
        query = parse_query(request, schemas.TimelineQuery)
        timelines = request.app[TIMELINES][kind.topic]
        names = request.app[MAKER_NAMES]
        # One more than asked: whether another page follows.
        found = search(timelines, _filter(query, names), query.limit + 1)
        keyed: Keyed = [(key_of(t), item_json(t, names)) for t in found[: query.limit]]
        more = len(found) > query.limit
        forwarding = request.app[FORWARDING]
        headers: dict[str, str] = {}
        if kind.spread and forwarding is not None:
            if repeated(request):  # the first instance gathers: this instance's part
                headers[KEYS_HEADER] = json.dumps([key for key, _ in keyed])
            else:
                keyed, more = await _gathered(forwarding, request, keyed, more, query.limit)
        listed = schemas.TimelineList(
            items=[schemas.TimelineItem.model_validate(item) for _, item in keyed],
            kept=timelines.capacity,
            statuses=list(timelines.kinds.statuses),
            next_cursor=encode_cursor(*keyed[-1][0]) if more and keyed else None,
        )
        response = data_response(listed)
        response.headers.update(headers)
        return response

    return handler


async def _gathered(
    forwarding: Forwarding, request: web.Request, keyed: Keyed, more: bool, limit: int
) -> tuple[Keyed, bool]:
    """This instance's page merged with every other instance's (the same query, repeated
    there), newest first; whether another page follows."""
    for answer in await forwarding.repeat_at_others(request):
        if answer.status != 200 or KEYS_HEADER not in answer.headers:
            raise VenueUnavailable(
                "Quotes are briefly not served; retry (an instance of the venue did not list)"
            )
        keys = json.loads(answer.headers[KEYS_HEADER])
        assert isinstance(answer.body, bytes)
        data = json.loads(answer.body)["data"]
        items = zip(keys, data["items"], strict=True)
        keyed += [((float(at), str(ident)), item) for (at, ident), item in items]
        more = more or data["next_cursor"] is not None
    keyed.sort(key=lambda pair: pair[0], reverse=True)
    return keyed[:limit], more or len(keyed) > limit


def _get_handler(kind: TimelineKind) -> Any:
    async def handler(request: web.Request) -> web.Response:
        timelines = request.app[TIMELINES][kind.topic]
        timeline = timelines.get(request.match_info["id"])
        if timeline is None:
            raise NotFound(
                f"No {kind.noun} with this id in the kept timelines",
                details={"reason": "unknown_or_dropped"},
            )
        detail = render_detail(timeline, timelines, kind, request.app[MAKER_NAMES], request)
        return data_response(detail)

    return handler


def add_routes(table: RouteTable) -> None:
    add = table.adder("sim", ("sim-timelines",))
    for kind in KINDS:
        add(
            "GET",
            f"/_sim/{kind.topic}",
            _list_handler(kind),
            f"simList{kind.operation}s",
            f"Every kept {kind.noun}, newest first, with its status and summary; filters "
            "status, taker, maker (wallet, credential prefix or fleet name), pair, since, "
            "until; pages by cursor",
            query=schemas.TimelineQuery,
            responses={200: schemas.TimelineList},
            errors=(InvalidRequest, InternalError),
        )
        add(
            "GET",
            f"/_sim/{kind.topic}/{{id}}",
            _get_handler(kind),
            f"simGet{kind.operation}",
            f"One {kind.noun}'s timeline: every step with its time, and the webhook "
            "deliveries of the events it produced",
            responses={200: kind.detail},
            errors=(NotFound, InternalError),
            # An RFQ's timeline is kept where its record is; the others at the first instance.
            **({"placement": "owner", "record_param": "id"} if kind.topic == "rfqs" else {}),
        )
