"""What reset, snapshots and `--state-dir` work on: each area registers its state participants.

A `StateParticipant` is one named piece of state that can be written out (`dump`, JSON-able) and
put back (`load`). Both are synchronous on purpose: the state control (services/sim/state.py)
loads every participant in one go, with no await in between, so no request or background task
ever sees half of the simulator restored. A new area adds its participants in its
`runtime/<area>.py`; nothing here lists the areas.

Every participant declares what it saves in a schema of its own (a `StateSchema`, next to the
class whose state it is): the attributes, by name and type. `SavedAttributes` writes them
through that schema and puts them back in place, so every service holding the object sees the
restored state. Renaming an attribute or changing its type changes the schema, which a
participant's round-trip test and the state directory's format version then follow; a saved
state that does not fit the schema is refused with a `StateFormatError` naming the participant
and the field, before anything is replaced."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import Any, Generic, Protocol, TypeVar, get_args, get_origin, runtime_checkable

from pydantic import BaseModel, ConfigDict, GetCoreSchemaHandler, ValidationError
from pydantic_core import core_schema


class StateFormatError(ValueError):
    """A saved state this version cannot read (an older or a foreign one): says which
    participant and which field."""


class StateParticipant(Protocol):
    name: str  # unique, dotted by area ("rfq.store", "access.keys", ...)

    def dump(self) -> dict[str, Any]:
        """The state as JSON-able data."""
        ...

    def load(self, state: dict[str, Any]) -> None:
        """Put back what `dump` returned (synchronously: no await)."""
        ...


@runtime_checkable
class CheckedParticipant(StateParticipant, Protocol):
    """A participant that reads its part with a schema: checked before anything is loaded."""

    def check(self, state: object) -> object:
        """Raise StateFormatError if `state` does not fit; otherwise what it read."""
        ...


class StateSchema(BaseModel):
    """Base of each participant's schema. Fields name the owner's attributes (a private one
    through `Field(validation_alias="_name")`); bytes are written as hex; JSON cannot hold
    tuple keys, so such mappings are annotated `AsPairs()`."""

    model_config = ConfigDict(
        extra="forbid",
        from_attributes=True,  # dumped from the owner's attributes
        validate_by_name=True,  # read back by field name
        validate_by_alias=True,
        ser_json_bytes="hex",
        val_json_bytes="hex",
        ser_json_inf_nan="constants",  # "never" is -inf (Settlement's last sweep)
    )


class AsPairs:
    """A mapping whose keys JSON cannot hold (tuples) written as a list of [key, value]
    pairs, in order, and read back into the same kind of mapping (dict, OrderedDict, or a
    defaultdict of the value's type)."""

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        container = get_origin(source) or source
        key, value = get_args(source)
        pairs = handler.generate_schema(list[tuple[key, value]])  # type: ignore[valid-type]
        if container is defaultdict:
            factory = get_origin(value) or value

            def build(items: list[tuple[Any, Any]]) -> Any:
                return defaultdict(factory, items)
        else:
            build = container
        return core_schema.union_schema(
            [
                handler(source),  # the owner's own mapping, when dumping
                core_schema.chain_schema(
                    [pairs, core_schema.no_info_plain_validator_function(build)]
                ),
            ],
            serialization=core_schema.plain_serializer_function_ser_schema(
                lambda mapping: list(mapping.items()), return_schema=pairs
            ),
        )


SchemaT = TypeVar("SchemaT", bound=StateSchema)


def read_schema(name: str, schema: type[SchemaT], state: object) -> SchemaT:
    """`state` read with `schema`, or a StateFormatError naming the participant and fields."""
    try:
        return schema.model_validate(state)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in error['loc']) or '(whole)'}: {error['msg']}"
            for error in exc.errors(include_url=False)[:3]
        )
        raise StateFormatError(
            f"the saved state of {name} does not fit this version's {schema.__name__} "
            f"({problems}): it was written by another version of rfqsim"
        ) from None


class SavedAttributes(Generic[SchemaT]):
    """The attributes of `owner` that `schema` declares, as one participant."""

    def __init__(
        self,
        name: str,
        owner: object,
        schema: type[SchemaT],
        *,
        after_load: Callable[[], None] | None = None,
    ) -> None:
        self.name = name
        self.schema = schema
        self._owner = owner
        self._after_load = after_load  # e.g. wake a worker whose queue was replaced
        # schema field -> the owner's attribute it is read from and written back to
        self._attributes = {
            field: info.validation_alias if isinstance(info.validation_alias, str) else field
            for field, info in schema.model_fields.items()
        }

    def dump(self) -> dict[str, Any]:
        return self.schema.model_validate(self._owner).model_dump(mode="json")

    def check(self, state: object) -> SchemaT:
        return read_schema(self.name, self.schema, state)

    def load(self, state: dict[str, Any]) -> None:
        saved = self.check(state)  # all or nothing: read whole before anything changes
        for field, attribute in self._attributes.items():
            setattr(self._owner, attribute, getattr(saved, field))
        if self._after_load is not None:
            self._after_load()


class ForgetOnLoad:
    """State that is not saved but must not outlive a reset or restore: caches of answers
    built from the old state, the request journal, a running scenario. `dump` is empty; `load`
    calls `forget`. `kept_in_file`: what it forgets is in the history file, which a state
    directory holds: a start on that directory (whose JSON leaves it out) keeps it."""

    def __init__(
        self, name: str, forget: Callable[[], None], *, kept_in_file: bool = False
    ) -> None:
        self.name = name
        self._forget = forget
        self.kept_in_file = kept_in_file

    def dump(self) -> dict[str, Any]:
        return {}

    def load(self, state: dict[str, Any]) -> None:
        self._forget()


class StateRegistry:
    """Every participant of the running simulator, in registration order."""

    def __init__(self) -> None:
        self._participants: dict[str, StateParticipant] = {}  # by name

    def register(self, *participants: StateParticipant) -> None:
        for participant in participants:
            if participant.name in self._participants:
                raise ValueError(f"state participant {participant.name!r} registered twice")
            self._participants[participant.name] = participant

    def unregister(self, name: str) -> None:
        self._participants.pop(name, None)

    @property
    def names(self) -> list[str]:
        return list(self._participants)

    def dump(self, *, without_file_backed: bool = False) -> dict[str, dict[str, Any]]:
        """Every participant's state; `without_file_backed` leaves out those whose state is
        the history database's rows (`kept_in_file`): a state directory holds that file, so its
        JSON need not repeat them, and a load that misses them leaves the file's rows be."""
        return {
            name: p.dump()
            for name, p in self._participants.items()
            if not (without_file_backed and getattr(p, "kept_in_file", False))
        }

    def dump_of(self, names: Iterable[str]) -> dict[str, dict[str, Any]]:
        """The state of the named participants that are registered (and only theirs)."""
        return {name: self._participants[name].dump() for name in names if name in self}

    def __contains__(self, name: object) -> bool:
        return name in self._participants

    def check(self, state: dict[str, dict[str, Any]]) -> None:
        """Raise StateFormatError if a registered participant cannot read its part of `state`
        (a state directory is checked whole before anything starts)."""
        for name, participant in self._participants.items():
            if name in state and isinstance(participant, CheckedParticipant):
                participant.check(state[name])

    def load(self, state: dict[str, dict[str, Any]], *, keep: Iterable[str] = ()) -> None:
        """Put back every participant's state, except those whose name starts with a prefix in
        `keep` (a reset that keeps the webhook registry). Every part is read with its schema
        before anything is replaced; a participant missing from `state` is left as it is (a
        snapshot older than an area added later)."""
        kept = tuple(keep)
        chosen = [
            (participant, state[name])
            for name, participant in self._participants.items()
            if name in state and not (kept and name.startswith(kept))
        ]
        for participant, part in chosen:
            if isinstance(participant, CheckedParticipant):
                participant.check(part)
        for participant, part in chosen:
            participant.load(part)
