"""Wire shapes of GET /_sim/rfqs, /_sim/swaps, /_sim/limit-orders, /_sim/transfers and one
object's timeline (the same shapes the console's live stream sends).

A step is rendered through one model per kind, made from the kind's `NamedTuple` in the area's
step table (services/<area>/history.py): the same fields in the same order, `SimTime` fields as
ISO strings, `winners` and `losers` as maker references, a `maker` with its `maker_name`; the
area's detail model holds a union of them on `kind` (so /_sim/openapi.json shows every kind)."""

from __future__ import annotations

from functools import reduce
from operator import or_
from typing import Annotated, Any, Literal, get_type_hints

from pydantic import AwareDatetime, Field, create_model, model_serializer
from pydantic_core.core_schema import SerializerFunctionWrapHandler

from simulator.api.http.cursors import cursor_field, next_cursor_field
from simulator.api.http.schemas import ApiModel, SnakeApiModel
from simulator.api.webhooks.schemas import DeliveryView
from simulator.services.shared.timelines import SimTime, StepKinds, StepType, time_fields


class TimelineQuery(ApiModel):
    status: str | None = Field(
        default=None, max_length=32, description="Only objects whose status is this (any case)"
    )
    taker: str | None = Field(
        default=None,
        max_length=64,
        description="Only this taker's (the wallet; a ramp transfer's wallet)",
    )
    maker: str | None = Field(
        default=None,
        max_length=64,
        description="Only those a maker took part in: its wallet, credential prefix or fleet "
        "name (alpha, ...)",
    )
    pair: str | None = Field(
        default=None,
        max_length=100,
        pattern=r"^0x[0-9a-fA-F]{40}/0x[0-9a-fA-F]{40}$",
        description="Only those selling the first token for the second: SELL/BUY token "
        "addresses (any case)",
    )
    since: AwareDatetime | None = Field(
        default=None, description="Created at or after this simulator time, with its zone"
    )
    until: AwareDatetime | None = Field(
        default=None, description="Created before this simulator time, with its zone"
    )
    cursor: str | None = cursor_field()
    limit: int = Field(default=100, ge=1, le=100_000, description="The newest N matches")


class MakerRef(ApiModel):
    wallet: str
    name: str | None = Field(description="The simulated maker's name (alpha, ...), if one")


class LoserRef(SnakeApiModel):
    wallet: str
    name: str | None = Field(description="The simulated maker's name (alpha, ...), if one")
    why: str | None = Field(description="Why its quote was not chosen")
    vs_winner_bps: float | int | None = Field(
        description="How far a usable losing quote's rate fell short of the winner's"
    )


class StepModel(SnakeApiModel):
    """One thing that happened (a kind's model: `step_model`). A step kept by an older version,
    without some of its kind's values, is read unchecked (`read_step`) and shows the values it
    has: the others are left out, as never set."""

    at: str = Field(description="Simulator time, ISO-8601 UTC with milliseconds")
    offset_ms: float = Field(description="Milliseconds since the object was created")

    # No return annotation: the schema stays the fields' (with one, it is that type's).
    @model_serializer(mode="wrap")
    def _set_only(self, handler: SerializerFunctionWrapHandler):  # type: ignore[no-untyped-def]
        fields = type(self).model_fields
        if len(self.model_fields_set) == len(fields):
            return handler(self)
        # Read unchecked (`read_step`): its values as they are, JSON-native already.
        return {name: self.__dict__[name] for name in fields if name in self.model_fields_set}


def _rendered(name: str, hint: Any, times: frozenset[str]) -> Any:
    """The type a step value has as the API shows it (`timelines._step`)."""
    if name == "winners":
        return list[MakerRef]
    if name == "losers":
        return list[LoserRef]
    if name in times:
        return str if hint is SimTime else str | None
    if hint is float:
        return int | float  # a number as recorded: an int stays an int
    return hint


def read_step(model: type[StepModel], values: dict[str, Any]) -> StepModel:
    """A rendered step through its kind's model: checked when it has every value."""
    if all(name in values or not f.is_required() for name, f in model.model_fields.items()):
        return model.model_validate(values)
    return model.model_construct(**values)


def step_model(kind: str, step_type: StepType) -> type[StepModel]:
    """The model a step of this kind renders through, named after its type."""
    hints = get_type_hints(step_type)
    fields: dict[str, Any] = {"kind": (Literal[kind], ...)}
    times = time_fields(step_type)
    for name in step_type._fields[2:]:
        fields[name] = (_rendered(name, hints[name], times), ...)
    if "maker" in fields:
        fields["maker_name"] = (
            str | None,
            Field(default=None, description="The simulated maker's name (alpha, ...), if one"),
        )
    return create_model(
        step_type.__name__,
        __base__=StepModel,
        __doc__=step_type.__doc__,
        **fields,
    )


_MODELS: dict[StepType, type[StepModel]] = {}  # one per step type, shared by the areas


def step_models(kinds: StepKinds) -> dict[str, type[StepModel]]:
    """An area's step models by kind."""
    out = {}
    for kind, step_type in kinds.types.items():
        model = _MODELS.get(step_type)
        if model is None:
            model = _MODELS[step_type] = step_model(kind, step_type)
        out[kind] = model
    return out


class TimelineItem(SnakeApiModel):
    id: str
    created_at: str = Field(description="Simulator time the object came to be")
    status: str = Field(description="Its status now, as its own API names it")
    makers: list[MakerRef] = Field(
        description="Makers it involved: asked, or whose orders it holds"
    )
    summary: dict[str, Any] = Field(
        description="What lists show: pair, amounts, taker, and per kind (RFQs: caller, "
        "reply_budget_ms, expires_at, winners)"
    )


class TimelineList(SnakeApiModel):
    items: list[TimelineItem] = Field(description="Newest first")
    kept: int = Field(
        description="How many objects of this kind are kept in memory (timelines.kept); older "
        "ones are read from the history database until the correction window and the retention "
        "have passed"
    )
    statuses: list[str] = Field(
        description="Every status an object of this kind can have (what `status` filters on)"
    )
    next_cursor: str | None = next_cursor_field()


def detail_model(operation: str, models: dict[str, type[StepModel]]) -> type[TimelineItem]:
    """One object's timeline of an area (operation: Rfq, Swap, ...): its steps one of the
    area's kinds each."""
    step = Annotated[reduce(or_, models.values()), Field(discriminator="kind")]  # type: ignore[valid-type]
    return create_model(
        f"{operation}Timeline",
        __base__=TimelineItem,
        steps=(list[step], Field(description="Oldest first")),  # type: ignore[valid-type]
        webhooks=(
            list[DeliveryView],
            Field(
                description="The webhook deliveries of the events it produced, with every attempt"
            ),
        ),
    )
