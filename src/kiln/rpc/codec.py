"""JSON-safe encoding of engine messages, replies and errors.

Any frozen dataclass defined in a ``kiln.rpc.*`` module can be sent, so new
message modules need no registration. Shapes on the wire:

    None, bool, int, float, str       themselves
    list                              a JSON list
    mapping with str keys             a JSON object (unless a key is TAG)
    everything else                   {TAG: <kind>, ...}
      "dataclass"  {"type": "module:qualname", "fields": {name: value}}
      "tuple"      {"items": [...]}
      "map"        {"items": [[key, value], ...]}   (non-str keys, or a TAG key)
      "datetime"   {"iso": "2024-05-01T12:00:00+00:00"}  (naive stays naive)
      "enum"       {"type": "module:qualname", "value": ...}
      "error"      see ``encode_error``

Decoding imports and builds only classes defined in ``kiln.rpc.*`` modules:
a payload can never name an arbitrary class. Fields the receiver does not know
(a newer sender's optional fields) are dropped. Imports: kiln.core, kiln.rpc.
"""

from __future__ import annotations

import dataclasses
import enum
import importlib
import logging
import uuid
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from kiln.core.errors import KilnError
from kiln.core.paths import Location, PathSegment
from kiln.rpc.errors import CodecError, RemoteError

log = logging.getLogger(__name__)

TAG = "__kiln__"
ALLOWED_PREFIX = "kiln.rpc."

_JSON_SCALARS = (str, int, float, bool)


def encode(value: Any) -> Any:
    """``value`` as JSON-safe data; raises CodecError (with the path) if it cannot be."""
    if value is None or (type(value) in _JSON_SCALARS):
        return value
    if isinstance(value, enum.Enum):
        return {TAG: "enum", "type": _type_tag(type(value)), "value": encode(value.value)}
    if isinstance(value, _JSON_SCALARS):  # a str/int subclass that is no enum
        return value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _encode_dataclass(value)
    if isinstance(value, Mapping):
        return _encode_mapping(value)
    if isinstance(value, list):
        return _encode_items(value)
    if isinstance(value, tuple):
        return {TAG: "tuple", "items": _encode_items(value)}
    if isinstance(value, datetime):
        return {TAG: "datetime", "iso": value.isoformat()}
    raise CodecError(f"cannot send a value of type {type(value).__qualname__}")


def decode(data: Any) -> Any:
    """The value ``encode`` gave ``data`` for; raises CodecError on a malformed payload."""
    if data is None or type(data) in _JSON_SCALARS:
        return data
    if isinstance(data, list):
        return _decode_items(data)
    if not isinstance(data, dict):
        raise CodecError(f"unexpected {type(data).__qualname__} in a payload")
    tag = data.get(TAG)
    if tag is None:
        return {key: _at(key, decode, value) for key, value in data.items()}
    try:
        if tag == "dataclass":
            return _decode_dataclass(data["type"], data["fields"])
        if tag == "tuple":
            return tuple(_decode_items(data["items"]))
        if tag == "map":
            return {decode(k): _at(str(k), decode, v) for k, v in data["items"]}
        if tag == "datetime":
            return datetime.fromisoformat(data["iso"])
        if tag == "enum":
            cls = _resolve(data["type"], lambda c: issubclass(c, enum.Enum))
            return cls(decode(data["value"]))
        if tag == "error":
            return decode_error(data)
    except (KeyError, TypeError, ValueError) as exc:
        raise CodecError(f"malformed {tag!r} value in a payload: {exc}") from exc
    raise CodecError(f"unknown tag {tag!r} in a payload")


# -- errors --------------------------------------------------------------------------------
def encode_error(exc: BaseException) -> dict[str, Any]:
    """A KilnError as data; anything else as a generic InternalError (logged here)."""
    if not isinstance(exc, KilnError):
        # Never send a stack trace or an unexpected error's text: it may hold secrets.
        reference = uuid.uuid4().hex[:12]
        log.error("unexpected error in an engine handler (reference %s)", reference, exc_info=exc)
        return {
            TAG: "error",
            "kind": "InternalError",
            "http_status": 500,
            "message": f"An unexpected error occurred in the engine (reference {reference}).",
        }
    data: dict[str, Any] = {
        TAG: "error",
        "kind": exc.kind,
        "http_status": int(exc.http_status),
        "message": exc.message,
        "full_message": exc.full_message,
        "path": list(exc.path),
        "location": _encode_location(exc.location),
        "category": exc.category,
    }
    sub_errors = getattr(exc, "errors", None)
    if sub_errors:
        data["errors"] = [encode_error(e) for e in sub_errors]
    return data


def decode_error(data: Mapping[str, Any]) -> RemoteError:
    """The RemoteError that stands for an ``encode_error`` result."""
    try:
        path = tuple(_path_segment(seg) for seg in data.get("path") or ())
        loc = data.get("location")
        location = Location(str(loc["file"]), int(loc["line"]), int(loc["column"])) if loc else None
        error = RemoteError(
            str(data["kind"]),
            int(data["http_status"]),
            str(data["message"]),
            path=path,
            location=location,
            category=data.get("category"),
            errors=[decode_error(e) for e in data.get("errors") or ()],
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise CodecError(f"malformed error in a payload: {exc}") from exc
    sent = data.get("full_message")
    if sent is not None and sent != error.full_message:
        error = RemoteError(
            error.kind,
            error.http_status,
            error.message,
            path=error.path,
            location=error.location,
            category=error.category,
            errors=error.errors,
            full_message=str(sent),
        )
    return error


# -- helpers -----------------------------------------------------------------------------
def _at(segment: PathSegment, fn: Any, value: Any) -> Any:
    """``fn(value)``, naming ``segment`` in the path of a CodecError it raises."""
    try:
        return fn(value)
    except CodecError as exc:
        raise exc.within(segment) from exc.__cause__


def _encode_items(items: list[Any] | tuple[Any, ...]) -> list[Any]:
    return [_at(i, encode, item) for i, item in enumerate(items)]


def _decode_items(items: list[Any]) -> list[Any]:
    if not isinstance(items, list):
        raise CodecError(f"expected a list, got {type(items).__qualname__}")
    return [_at(i, decode, item) for i, item in enumerate(items)]


def _encode_mapping(value: Mapping[Any, Any]) -> dict[str, Any]:
    if TAG not in value and all(type(key) is str for key in value):
        return {key: _at(key, encode, item) for key, item in value.items()}
    return {
        TAG: "map",
        "items": [[encode(key), _at(str(key), encode, item)] for key, item in value.items()],
    }


def _encode_dataclass(value: Any) -> dict[str, Any]:
    fields = {
        f.name: _at(f.name, encode, getattr(value, f.name))
        for f in dataclasses.fields(value)
        if f.init
    }
    return {TAG: "dataclass", "type": _type_tag(type(value)), "fields": fields}


def _decode_dataclass(type_tag: str, fields: dict[str, Any]) -> Any:
    cls = _resolve(type_tag, dataclasses.is_dataclass)
    known = {f.name for f in dataclasses.fields(cls) if f.init}
    unknown = set(fields) - known
    if unknown:
        log.debug("dropping fields %s unknown to %s", sorted(unknown), type_tag)
    kwargs = {name: _at(name, decode, value) for name, value in fields.items() if name in known}
    try:
        return cls(**kwargs)
    except TypeError as exc:  # a required field is missing
        raise CodecError(f"cannot build {type_tag}: {exc}") from exc


def _encode_location(location: Location | None) -> dict[str, Any] | None:
    if location is None:
        return None
    return {"file": location.file, "line": location.line, "column": location.column}


def _path_segment(segment: Any) -> PathSegment:
    if isinstance(segment, str | int) and not isinstance(segment, bool):
        return segment
    raise CodecError(f"a path segment must be a string or an integer, not {segment!r}")


def _type_tag(cls: type) -> str:
    tag = f"{cls.__module__}:{cls.__qualname__}"
    if not _allowed(cls.__module__, cls.__qualname__):
        raise CodecError(f"cannot send {tag}: only classes defined in kiln.rpc modules")
    return tag


def _allowed(module: str, qualname: str) -> bool:
    parts = module.split(".") + qualname.split(".")
    return module.startswith(ALLOWED_PREFIX) and all(
        part.isidentifier() and not part.startswith("_") for part in parts
    )


_resolved: dict[str, type] = {}


def _resolve(type_tag: str, accept: Any) -> Any:
    """The class a tag names, only if a kiln.rpc module defines it and ``accept`` agrees."""
    cls = _resolved.get(type_tag)
    if cls is not None:
        return cls
    module_name, _, qualname = type_tag.partition(":")
    if not _allowed(module_name, qualname):
        raise CodecError(f"refusing to decode {type_tag!r}: not a class of a kiln.rpc module")
    try:
        found: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise CodecError(f"unknown message module {module_name!r}") from exc
    for part in qualname.split("."):
        found = getattr(found, part, None)
    if not (
        isinstance(found, type)
        and found.__module__ == module_name
        and found.__qualname__ == qualname
        and accept(found)
    ):
        raise CodecError(f"refusing to decode {type_tag!r}: no such message class")
    _resolved[type_tag] = found
    return found
