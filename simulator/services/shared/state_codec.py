"""Service state as JSON: what snapshots hold and `--state-dir` writes.

The stores are plain Python (dataclasses, dicts keyed by tuples or bytes, sets, heaps, seeded
`random.Random` streams, a few pydantic settings models). Writing a serializer per record type
would have to change with every field; instead every value is written with a small tag saying
what it was, and read back into the same type. Only classes of our own packages are rebuilt
(`ALLOWED_MODULES`): a state file names classes, and loading one must never import anything
else. A value of any other type is refused at dump time, naming where it was, so a new field a
snapshot cannot hold is found by the first test that dumps it, not by a user at restore time.

Rebuilding bypasses `__init__` (and frozen dataclasses' `__setattr__`): a record comes back with
exactly the fields it had, whatever its constructor would compute."""

from __future__ import annotations

import dataclasses
import enum
import importlib
import random
from collections import Counter, OrderedDict, defaultdict, deque
from datetime import datetime
from decimal import Decimal
from typing import Any

from pydantic import BaseModel

ALLOWED_MODULES = ("simulator.", "provider_sandbox.", "makers.", "rfqkit.", "contracts.")
# The factories a defaultdict may have (anything else cannot be named in a file).
_FACTORIES: dict[str, Any] = {"set": set, "list": list, "int": int, "dict": dict}


class StateCodecError(ValueError):
    """A value that cannot be written, or a document that cannot be read; says where."""


def _class_path(cls: type, where: str = "$") -> str:
    """The class as a state document names it; only rfqsim's own classes can be named (what
    `_load_class` would refuse is refused here, when the state is written)."""
    if not cls.__module__.startswith(ALLOWED_MODULES):
        raise StateCodecError(f"{where}: cannot write a {cls.__qualname__} ({cls.__module__})")
    return f"{cls.__module__}:{cls.__qualname__}"


def _load_class(path: str) -> type:
    module, _, qualname = path.partition(":")
    if not module.startswith(ALLOWED_MODULES) or not qualname:
        raise StateCodecError(f"refusing to load class {path!r}: not one of rfqsim's own")
    target: Any = importlib.import_module(module)
    for part in qualname.split("."):
        target = getattr(target, part, None)
        if target is None:
            raise StateCodecError(f"class {path!r} does not exist in this version")
    if not isinstance(target, type):
        raise StateCodecError(f"{path!r} is not a class")
    return target


def encode(value: Any, where: str = "$") -> Any:
    """`value` as JSON-able data; raises StateCodecError naming the path of what cannot be."""
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, enum.Enum):
        return {"__enum__": _class_path(type(value), where), "v": encode(value.value, where)}
    if isinstance(value, int | float):
        return value
    if isinstance(value, bytes):
        return {"__bytes__": value.hex()}
    if isinstance(value, Decimal):
        return {"__decimal__": str(value)}
    if isinstance(value, datetime):
        return {"__datetime__": value.isoformat()}
    if isinstance(value, random.Random):
        return {"__random__": encode(value.getstate(), where)}
    if isinstance(value, BaseModel):
        return {"__model__": _class_path(type(value), where), "v": value.model_dump(mode="json")}
    if isinstance(value, tuple):
        return {"__tuple__": [encode(v, f"{where}[{i}]") for i, v in enumerate(value)]}
    if isinstance(value, set | frozenset):
        tag = "__frozenset__" if isinstance(value, frozenset) else "__set__"
        return {tag: [encode(v, f"{where}{{}}") for v in value]}
    if isinstance(value, deque):
        return {"__deque__": [encode(v, f"{where}[]") for v in value], "max": value.maxlen}
    if isinstance(value, list):
        return [encode(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, dict):
        return _encode_dict(value, where)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            "__dataclass__": _class_path(type(value), where),
            "v": {
                f.name: encode(getattr(value, f.name), f"{where}.{f.name}")
                for f in dataclasses.fields(value)
            },
        }
    if type(value).__module__.startswith(ALLOWED_MODULES) and hasattr(value, "__dict__"):
        return {
            "__object__": _class_path(type(value), where),
            "v": {k: encode(v, f"{where}.{k}") for k, v in vars(value).items()},
        }
    raise StateCodecError(f"{where}: cannot write a {type(value).__name__} into a state document")


def _encode_dict(value: dict[Any, Any], where: str) -> Any:
    pairs = [[encode(k, f"{where}<key>"), encode(v, f"{where}[{k!r}]")] for k, v in value.items()]
    out: dict[str, Any] = {"__dict__": pairs}
    if isinstance(value, defaultdict):
        factory = value.default_factory
        name = getattr(factory, "__name__", "")
        if _FACTORIES.get(name) is not factory:
            raise StateCodecError(f"{where}: defaultdict of {factory!r} cannot be written")
        out["default"] = name
    elif isinstance(value, Counter):
        out["kind"] = "counter"
    elif isinstance(value, OrderedDict):
        out["kind"] = "ordered"
    return out


def decode(data: Any) -> Any:
    """The value `encode` wrote."""
    if isinstance(data, list):
        return [decode(v) for v in data]
    if not isinstance(data, dict):
        return data
    if "__dict__" in data:
        return _decode_dict(data)
    if "__tuple__" in data:
        return tuple(decode(v) for v in data["__tuple__"])
    if "__set__" in data:
        return {decode(v) for v in data["__set__"]}
    if "__frozenset__" in data:
        return frozenset(decode(v) for v in data["__frozenset__"])
    if "__deque__" in data:
        return deque((decode(v) for v in data["__deque__"]), maxlen=data.get("max"))
    if "__bytes__" in data:
        return bytes.fromhex(data["__bytes__"])
    if "__decimal__" in data:
        return Decimal(data["__decimal__"])
    if "__datetime__" in data:
        return datetime.fromisoformat(data["__datetime__"])
    if "__random__" in data:
        rng = random.Random()
        rng.setstate(decode(data["__random__"]))
        return rng
    if "__enum__" in data:
        return _load_class(data["__enum__"])(decode(data["v"]))
    if "__model__" in data:
        model = _load_class(data["__model__"])
        assert issubclass(model, BaseModel)
        return model.model_validate(data["v"])
    if "__dataclass__" in data or "__object__" in data:
        cls = _load_class(data.get("__dataclass__") or data["__object__"])
        instance: Any = object.__new__(cls)
        for name, item in data["v"].items():
            object.__setattr__(instance, name, decode(item))
        return instance
    raise StateCodecError(f"unknown entry with keys {sorted(data)[:5]}")


def _decode_dict(data: dict[str, Any]) -> dict[Any, Any]:
    items = [(decode(k), decode(v)) for k, v in data["__dict__"]]
    if "default" in data:
        factory = _FACTORIES.get(data["default"])
        if factory is None:
            raise StateCodecError(f"unknown defaultdict factory {data['default']!r}")
        return defaultdict(factory, items)
    if data.get("kind") == "counter":
        return Counter(dict(items))
    if data.get("kind") == "ordered":
        return OrderedDict(items)
    return dict(items)
