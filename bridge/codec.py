"""ProtoJSON in and out, with the limits that keep bad input from hurting.

- Parsing: body size is capped by the face (BridgeConfig.max_body_bytes), nesting
  depth here; `protojson` (json_format's rules, compiled per message type) or,
  for whatever it leaves, protobuf's `json_format` does the rest, ignoring unknown fields
  (spec §5.7) and rejecting wrong types and unknown enum names with
  InvalidParams naming the problem.
- Printing: `protojson.to_dict`, equal to `json_format.MessageToDict`
  (camelCase, enum names, defaults omitted), plus
  every REQUIRED top-level field of the response even at its default, so
  `ListTasksResponse.nextPageToken` is present and empty on the last page
  (spec §3.1.4). A task answered again unchanged is printed once (`rendered`),
  and so is a stream event that several streams carry (`printed_event`).
- JSON text: orjson both ways, with the standard json module wherever the two
  could differ, so what is accepted, parsed and written is json's
  (tests/property/test_json_codec.py holds them equal); the gain is in
  docs/benchmarks.md.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cache
from typing import Any, cast

import orjson
from google.api import field_behavior_pb2
from google.protobuf import json_format
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message

from a2a_grpc.bridge import protojson
from a2a_grpc.bridge.face import Answer
from a2a_grpc.bridge.plain_words import plainly
from a2a_grpc.core.errors import FieldViolation, InvalidParamsError, ParseError
from a2a_grpc.core.rpc_status import rpc_status_of
from a2a_grpc.core.stream import Renderings
from a2a_grpc.generated.a2a_pb2 import StreamResponse, Task

DEFAULT_MAX_DEPTH = 32


# orjson reads a number of 19 digits or more that overflows 64 bits as a float,
# where json keeps the integer: such bodies go to json. Found with every ASCII
# digit mapped to "0" and all else to " ", then a search for 19 zeros: the
# regular expression \d{19} tries each position in turn (docs/benchmarks.md).
_DIGITS_AS_ZEROS = bytes(0x30 if 0x30 <= b <= 0x39 else 0x20 for b in range(256))
_NINETEEN_DIGITS = b"0" * 19


def _long_number(body: bytes) -> bool:
    return _NINETEEN_DIGITS in body.translate(_DIGITS_AS_ZEROS)


def _decode(body: bytes) -> Any:
    """json.loads's result, faster: orjson, and json wherever the two could
    differ (what orjson refuses: NaN, lone surrogates, a BOM, UTF-16, ...;
    long integers)."""
    if not _long_number(body):
        try:
            return orjson.loads(body)
        except orjson.JSONDecodeError:
            pass
    return json.loads(body)


def loads(body: bytes, max_depth: int = DEFAULT_MAX_DEPTH) -> Any:
    """Parse a JSON body; ParseError for bad JSON or nesting beyond `max_depth`."""
    try:
        value = _decode(body)
    except RecursionError:
        raise ParseError(f"JSON nested deeper than {max_depth} levels") from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise ParseError(f"invalid JSON: {exc}") from None
    # Nesting can't exceed the number of brackets: most bodies need no walk at all.
    if (body.count(b"{") + body.count(b"[") > max_depth
            and _depth_exceeds(value, max_depth)):
        raise ParseError(f"JSON nested deeper than {max_depth} levels")
    return value


def _depth_exceeds(value: Any, limit: int) -> bool:
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth > limit:
                return True
            children = item.values() if isinstance(item, dict) else item
            stack.extend((c, depth + 1) for c in children if isinstance(c, dict | list))
    return False


def parse(data: Any, cls: type[Message], where: str = "params") -> Message:
    """A request message from decoded JSON (InvalidParams when it doesn't fit)."""
    if not isinstance(data, dict):
        raise InvalidParamsError(
            f"{where} must be a JSON object",
            violations=[FieldViolation(where, "must be a JSON object")],
        )
    try:
        return protojson.parse(data, cls)
    except Exception:  # Fallback, or any surprise on odd input: never an internal error
        pass  # json_format decides: it accepts the input or names what is wrong
    try:
        # Unknown fields are dropped first, so that the strict parse still rejects
        # unknown enum names (json_format's ignore mode would quietly zero them).
        return json_format.ParseDict(_known(data, cast(Descriptor, cls.DESCRIPTOR)), cls())
    except (json_format.ParseError, ValueError, TypeError) as exc:
        said = plainly(str(exc))
        raise InvalidParamsError(
            f"invalid {where}: {said}", violations=[FieldViolation(where, said)]
        ) from None


def _known(data: Any, desc: Descriptor) -> Any:
    """`data` without the keys `desc` does not define, at every level (§5.7)."""
    if not isinstance(data, dict) or desc.full_name.startswith("google.protobuf."):
        return data  # Struct, Value, Timestamp...: free-form or handled by json_format
    fields = _fields_by_key(desc)
    out = {}
    for key, value in data.items():
        f = fields.get(key)
        if f is None:
            continue
        sub = f.message_type
        if sub is not None and sub.GetOptions().map_entry:
            value_type = sub.fields_by_name["value"].message_type
            if value_type is not None and isinstance(value, dict):
                value = {k: _known(v, value_type) for k, v in value.items()}
        elif sub is not None and f.is_repeated and isinstance(value, list):
            value = [_known(v, sub) for v in value]
        elif sub is not None:
            value = _known(value, sub)
        out[key] = value
    return out


@cache
def _fields_by_key(desc: Descriptor) -> dict[str, FieldDescriptor]:
    return {f.json_name: f for f in desc.fields} | {f.name: f for f in desc.fields}


@cache
def _required_fields(desc: Descriptor) -> tuple[FieldDescriptor, ...]:
    marks = field_behavior_pb2.field_behavior
    return tuple(f for f in desc.fields
                 if field_behavior_pb2.REQUIRED in f.GetOptions().Extensions[marks])


def _default(f: FieldDescriptor) -> Any:
    if f.is_repeated:
        return []
    if f.enum_type is not None:
        return f.enum_type.values[0].name
    if f.type == FieldDescriptor.TYPE_BOOL:
        return False
    if f.type in (FieldDescriptor.TYPE_STRING, FieldDescriptor.TYPE_BYTES):
        return ""
    if f.type in (FieldDescriptor.TYPE_INT64, FieldDescriptor.TYPE_UINT64,
                  FieldDescriptor.TYPE_SINT64, FieldDescriptor.TYPE_FIXED64,
                  FieldDescriptor.TYPE_SFIXED64):
        return "0"  # ProtoJSON writes 64-bit integers as strings
    return 0


Printer = Callable[[Message], dict[str, Any]]
_printers: dict[type, Printer] = {}  # per message class (every event is printed here)


def to_dict(msg: Message) -> dict[str, Any]:
    """ProtoJSON of `msg`, with its REQUIRED scalar and repeated keys even when empty."""
    print_message = _printers.get(type(msg))
    if print_message is None:
        print_message = _printers[type(msg)] = _printer_for(msg.DESCRIPTOR)  # type: ignore[arg-type]  # upb's or the Python one
    return print_message(msg)


def _printer_for(desc: Descriptor) -> Printer:
    printed = protojson.printer(desc)
    fill = tuple((f.json_name, f) for f in _required_fields(desc)
                 if f.is_repeated or f.message_type is None)
    if not fill:
        return printed

    def print_filled(msg: Message) -> dict[str, Any]:
        out = printed(msg)
        for key, f in fill:
            if key not in out:
                out[key] = _default(f)
        return out
    return print_filled


class Printed:
    """JSON printed before, written as it is where it stands in an answer."""

    __slots__ = ("json",)

    def __init__(self, text: bytes) -> None:
        self.json = text


def _as_fragment(value: Any) -> Any:
    if isinstance(value, Printed):
        return orjson.Fragment(value.json)
    raise TypeError(f"{type(value).__name__} is not JSON")


def _as_value(value: Any) -> Any:
    if isinstance(value, Printed):
        return json.loads(value.json)
    raise TypeError(f"{type(value).__name__} is not JSON")


# Compact JSON, as every answer and event is sent.
_to_json = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False,
                            default=_as_value).encode


def dumps(data: Any) -> bytes:
    """Compact UTF-8 JSON: orjson, or json for what orjson refuses (keys that are
    not strings, integers beyond 64 bits, invalid strings), so the bytes are
    what json would write for every value we send."""
    try:
        return orjson.dumps(data, default=_as_fragment)
    except TypeError:  # orjson.JSONEncodeError is one
        return _to_json(data).encode()


class _PrintedTasks:
    """Tasks as ProtoJSON, by the task's own protobuf bytes: a task answered
    again unchanged (a GetTask of a final task, above all) is printed once.
    Keyed by the content, an entry is never stale, and reaches only a caller
    the service has just given that very task. Oldest out first, within
    `budget` bytes in all; a task over `largest` bytes is not kept."""

    def __init__(self, budget: int = 4 << 20, largest: int = 32 << 10) -> None:
        self.budget, self.largest = budget, largest
        self._kept: dict[bytes, Printed] = {}
        self._size = 0

    def __call__(self, task: Task) -> Printed:
        key = task.SerializeToString()
        kept = self._kept.get(key)
        if kept is not None:
            return kept
        kept = Printed(dumps(to_dict(task)))
        size = len(key) + len(kept.json)
        if len(key) <= self.largest:
            while self._kept and self._size + size > self.budget:
                old = next(iter(self._kept))
                self._size -= len(old) + len(self._kept.pop(old).json)
            self._kept[key], self._size = kept, self._size + size
        return kept


printed_task = _PrintedTasks()


def rendered(msg: Message) -> Any:
    """A unary answer's result for `dumps`: a Task printed once (`_PrintedTasks`),
    anything else as `to_dict` gives it."""
    if type(msg) is Task:
        return printed_task(msg)
    return to_dict(msg)


# This edge's name for what it leaves in an event's Renderings (core/stream.py).
PROTOJSON = "protojson"


def printed_event(event: StreamResponse, made: Renderings | None) -> Any:
    """A stream event for `dumps`: printed once for all the streams that carry
    this very event (`made`, core/stream.py Renderings), else as `to_dict`
    gives it."""
    if made is None:
        return to_dict(event)
    printed = made.get(PROTOJSON)
    if printed is None:
        printed = made[PROTOJSON] = Printed(dumps(to_dict(event)))
    return printed


def json_response(data: Any, content_type: str, status: int = 200,
                  headers: dict[str, str] | None = None) -> Answer:
    out = {"Content-Type": content_type}
    if headers:
        out.update(headers)
    return Answer(status, dumps(data), out, close=out.get("Connection") == "close")


def error_details(exc: BaseException) -> tuple[int, dict[str, Any]]:
    """The google.rpc.Status of `exc` as ProtoJSON, with its gRPC code number."""
    status = rpc_status_of(exc)
    return status.code, json_format.MessageToDict(status)
