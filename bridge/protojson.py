"""ProtoJSON at the speed the hot path needs, with protobuf's `json_format` as the rule.

`json_format` decides every field's JSON form by walking descriptors in Python
on every call; it was a third of a SendMessage's CPU on the JSON-RPC path.
This module does the same walk once per message type and keeps, for each
field, its JSON name and one converter. What it gives is what `json_format`
gives, by construction and by test (tests/property/test_protojson.py compares
both on generated messages and JSON):

- `to_dict(msg)`: `json_format.MessageToDict(msg)` (camelCase names, enum
  names, 64-bit integers as strings, bytes as base64, defaults omitted). It
  iterates `ListFields()`, as `json_format` does, so the keys and their order
  are the same. Well-known types (Timestamp, Struct, Value, ...) and message
  types with map fields are printed by `json_format` itself.
- `parse(data, cls)`: `json_format.ParseDict(data, cls())` for JSON whose
  values already have their exact JSON types (strings, booleans, integers,
  objects, arrays, enum names). Anything else (a null, a number given as a
  string, bytes, maps, a key given under both of its names, two members of
  one oneof) raises `Fallback`, and the caller runs `json_format`, which
  accepts it or names the problem. Unknown keys are skipped (spec §5.7).
  The parser is protojson_parse.py; this module prints.
"""

from __future__ import annotations

import base64
import time
from collections.abc import Callable
from typing import Any

from google.protobuf import json_format
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message

from a2a_grpc.bridge.protojson_parse import INT64, WELL_KNOWN, Fallback, parse
from a2a_grpc.core.compiled import define, per_type

F = FieldDescriptor
Convert = Callable[[Any], Any]
__all__ = ["Fallback", "parse", "to_dict"]

def to_dict(msg: Message) -> dict[str, Any]:
    desc: Descriptor = msg.DESCRIPTOR  # type: ignore[assignment]  # upb's or the Python one
    return _printer(desc)(msg)


def printer(desc: Descriptor) -> Printer:
    """`to_dict` for messages of type `desc`, looked up once: for a caller
    that keeps it per type, one call a message instead of three."""
    return _printer(desc)


def _identity(value: Any) -> Any:
    return value


def _wkt(value: Message) -> Any:
    return json_format.MessageToDict(value)


def _json_string(value: Any) -> str:
    return value.ToJsonString()  # type: ignore[no-any-return]


_YEAR_10000 = 253_402_300_800  # the first second json_format refuses
_last_second: tuple[int, str] = (-1, "")  # timestamps mostly share the current second


def _timestamp(value: Any) -> str:
    """Timestamp.ToJsonString's output, without its datetime arithmetic: RFC 3339
    in UTC with 0, 3, 6 or 9 fractional digits. Before 1970, and for values
    json_format refuses, json_format itself answers (or raises)."""
    global _last_second
    seconds, nanos = value.seconds, value.nanos
    if not (0 <= seconds < _YEAR_10000 and 0 <= nanos < 1_000_000_000):
        return _json_string(value)
    last = _last_second  # one read: another thread may replace it meanwhile
    if seconds != last[0]:
        try:
            text = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds))
        except (OverflowError, OSError, ValueError):  # a platform's gmtime stops short
            return _json_string(value)
        last = _last_second = (seconds, text)
    base = last[1]
    if nanos == 0:
        return base + "Z"
    if nanos % 1_000_000 == 0:
        return f"{base}.{nanos // 1_000_000:03d}Z"
    if nanos % 1000 == 0:
        return f"{base}.{nanos // 1000:06d}Z"
    return f"{base}.{nanos:09d}Z"


def _bytes(value: bytes) -> str:
    return base64.b64encode(value).decode()


def _scalar(f: FieldDescriptor) -> Convert:
    if f.type in INT64:
        return str
    if f.type == F.TYPE_BYTES:
        return _bytes
    if f.type == F.TYPE_ENUM and f.enum_type is not None:
        return _EnumNames({v.number: v.name for v in f.enum_type.values})
    if f.type in (F.TYPE_FLOAT, F.TYPE_DOUBLE):
        raise LookupError  # NaN, Infinity and float32 rounding: json_format's job
    return _identity


class _EnumNames(dict[int, str]):
    """An enum's value -> its name (an unknown value is printed as its number).
    A compiled printer looks a single value up in it directly, without a call."""

    def __call__(self, value: int) -> Any:
        return self.get(value, value)


def _value_printer(f: FieldDescriptor) -> Convert:
    sub = f.message_type
    if sub is None:
        return _scalar(f)
    if sub.full_name == "google.protobuf.Timestamp":
        return _timestamp
    if sub.full_name == "google.protobuf.Duration":
        return _json_string  # what json_format calls for it
    if sub.full_name.startswith(WELL_KNOWN):
        return _wkt
    return _printer(sub)


# Printers are compiled per message type into straight-line code: one test per
# field (one WhichOneof per oneof), in field-number order, the order of
# ListFields, which json_format walks. ListFields builds a tuple and a
# descriptor object per set field and was half of printing a stream event;
# reading the fields directly costs about a third less. The code is built
# from the descriptor alone (attribute names are identifiers, keys go
# through repr), as dataclasses builds __init__.
Printer = Callable[[Message], dict[str, Any]]
_printers: dict[str, Callable[[Any], Any]] = {}


def _printer(desc: Descriptor) -> Printer:
    return per_type(_printers, desc, _compile_printer)


def _compile_printer(desc: Descriptor) -> Printer:
    if (desc.full_name.startswith(WELL_KNOWN) or desc.extension_ranges
            or any(f.message_type is not None and f.message_type.GetOptions().map_entry
                   for f in desc.fields)):
        return json_format.MessageToDict
    fields = sorted(desc.fields, key=lambda f: f.number)
    namespace: dict[str, Any] = {}
    lines = ["def print_message(msg):", "    out = {}"]
    try:
        for i, f in enumerate(fields):
            group = _oneof_group(f, fields)
            if group is not None:
                oneof, members = group
                if f is members[0]:  # the whole oneof, where its first member goes
                    # None: printed as it is (a Part's text), without a call.
                    namespace[f"o{i}"] = {
                        m.name: (m.json_name, None if (c := _value_printer(m)) is _identity
                                 else c) for m in members}
                    lines += [f"    k = msg.WhichOneof({oneof!r})",
                              "    if k is not None:", f"        key, convert = o{i}[k]",
                              "        v = getattr(msg, k)",
                              "        out[key] = v if convert is None else convert(v)"]
                continue
            convert = namespace[f"c{i}"] = _value_printer(f)
            key = repr(f.json_name)
            # A value printed as it is (strings, booleans, 32-bit integers) is not
            # passed through a function that returns it: a call per field printed.
            same = convert is _identity
            if f.is_repeated:
                # Most repeated fields here hold one item (a message's part, a task's
                # artifact): read at index 0, not iterated (upb's containers have no
                # __iter__: a loop ends by raising IndexError).
                value = ("list(v)" if same else
                         f"[c{i}(v[0])] if len(v) == 1 else [c{i}(x) for x in v]")
                lines += [f"    v = msg.{f.name}", "    if v:", f"        out[{key}] = {value}"]
            elif f.has_presence:
                value = f"msg.{f.name}" if same else f"c{i}(msg.{f.name})"
                lines += [f"    if msg.HasField({f.name!r}):", f"        out[{key}] = {value}"]
            else:  # implicit presence: set means not the default
                # An enum's name is looked up in place (a task's state, a role).
                value = ("v" if same else f"c{i}.get(v, v)" if isinstance(convert, _EnumNames)
                         else f"c{i}(v)")
                lines += [f"    v = msg.{f.name}", "    if v:", f"        out[{key}] = {value}"]
    except LookupError:  # a field json_format must print (floats)
        return json_format.MessageToDict
    lines.append("    return out")
    return define(lines, namespace, "print_message")


def _oneof_group(f: FieldDescriptor, fields: list[FieldDescriptor]
                 ) -> tuple[str, list[FieldDescriptor]] | None:
    """The name and members of `f`'s oneof, when one WhichOneof can print them:
    two or more members, with no other field between them in number order."""
    oneof = f.containing_oneof
    if oneof is None or len(oneof.fields) < 2:
        return None
    members = [m for m in fields if m.containing_oneof is oneof]
    at = fields.index(members[0])
    return (oneof.name, members) if fields[at:at + len(members)] == members else None
