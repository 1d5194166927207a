"""ProtoJSON parsing at the speed the hot path needs (protojson.py says the
rule): `parse(data, cls)` fills a new `cls` from decoded JSON whose values
have exactly their JSON types, and raises `Fallback` for anything
`json_format` must decide."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

from google.protobuf import json_format
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message

__all__ = ["INT32", "INT64", "WELL_KNOWN", "Fallback", "parse"]

F = FieldDescriptor
INT64 = frozenset({F.TYPE_INT64, F.TYPE_UINT64, F.TYPE_SINT64, F.TYPE_FIXED64,
                   F.TYPE_SFIXED64})
INT32 = frozenset({F.TYPE_INT32, F.TYPE_UINT32, F.TYPE_SINT32, F.TYPE_FIXED32,
                   F.TYPE_SFIXED32})
WELL_KNOWN = "google.protobuf."


class Fallback(Exception):
    """The fast parser does not decide this input: let `json_format` do it."""


def parse(data: dict[str, Any], cls: type[Message]) -> Message:
    """A new `cls` from decoded JSON; Fallback when `json_format` must decide."""
    msg = cls()
    _parser(cls.DESCRIPTOR)(data, msg)
    return msg


Setter = Callable[[Message, Any], None]


def _exact(kind: type) -> Callable[[Any], Any]:
    def check(v: Any) -> Any:
        if type(v) is not kind:  # not isinstance: True is no integer here
            raise Fallback
        return v  # an integer out of range: the setter's ValueError falls back
    return check


def _check_scalar(f: FieldDescriptor) -> Callable[[Any], Any]:
    """The stored value of a JSON value that has exactly the field's JSON type."""
    if f.type == F.TYPE_STRING:
        return _exact(str)
    if f.type == F.TYPE_BOOL:
        return _exact(bool)
    if f.type in INT32 or f.type in INT64:
        return _exact(int)
    if f.type == F.TYPE_ENUM and f.enum_type is not None:
        numbers = {v.name: v.number for v in f.enum_type.values}

        def enum(v: Any) -> Any:
            number = numbers.get(v) if type(v) is str else None
            if number is None:
                raise Fallback
            return number
        return enum
    raise Fallback  # bytes, floats: json_format


def _setter(f: FieldDescriptor) -> Setter:
    name = f.name
    sub = f.message_type
    if sub is not None and sub.GetOptions().map_entry:
        raise Fallback
    if sub is not None and sub.full_name.startswith(WELL_KNOWN):
        if f.is_repeated:
            raise Fallback

        def well_known(msg: Message, v: Any) -> None:
            child = getattr(msg, name)
            child.SetInParent()
            try:
                json_format.ParseDict(v, child)
            except json_format.Error as exc:
                raise Fallback from exc
        return well_known
    if sub is not None:
        if f.is_repeated:
            def messages(msg: Message, v: Any) -> None:
                if type(v) is not list:
                    raise Fallback
                container = getattr(msg, name)
                parse_sub = _parser(sub)
                for item in v:
                    parse_sub(item, container.add())
            return messages

        def message(msg: Message, v: Any) -> None:
            child = getattr(msg, name)
            child.SetInParent()
            _parser(sub)(v, child)
        return message
    check = _check_scalar(f)
    if f.is_repeated:
        def scalars(msg: Message, v: Any) -> None:
            if type(v) is not list:
                raise Fallback
            getattr(msg, name).extend([check(x) for x in v])
        return scalars

    def scalar(msg: Message, v: Any) -> None:
        setattr(msg, name, check(v))
    return scalar


def _refuse(msg: Message, v: Any) -> None:
    raise Fallback


@cache
def _parser(desc: Descriptor) -> Callable[[Any, Message], None]:
    table: dict[str, tuple[FieldDescriptor, Setter, str]] = {}
    for f in desc.fields:
        try:
            setter = _setter(f)
        except Fallback:
            setter = _refuse
        group = f.containing_oneof.name if f.containing_oneof is not None else ""
        table[f.json_name] = table[f.name] = (f, setter, group)

    def parse_message(data: Any, msg: Message) -> None:
        if type(data) is not dict:
            raise Fallback
        seen: set[str] = set()
        for key, value in data.items():
            entry = table.get(key)
            if entry is None:
                continue  # unknown field: ignored (§5.7)
            f, setter, group = entry
            if value is None or f.name in seen or (group and group in seen):
                raise Fallback  # null, a field named twice, or two members of a oneof
            seen.add(f.name)
            if group:
                seen.add(group)
            try:
                setter(msg, value)
            except (ValueError, TypeError) as exc:
                raise Fallback from exc

    return parse_message
