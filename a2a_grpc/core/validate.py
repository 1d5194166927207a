"""Request validation: the proto's REQUIRED marks plus a few rules it can't say.

Spec §5.7: a field marked `(google.api.field_behavior) = REQUIRED` must be
set, and a required list must have at least one element. The marks are read
from the descriptors, so the rule follows the proto. What the marks can't
express is listed in `_EXTRA`. Every failure is an InvalidParamsError whose
violations name the fields by their JSON path (`message.parts[0]`), never an
internal error.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import cache
from typing import Any

from google.api import field_behavior_pb2
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message as ProtoMessage

from a2a_grpc.core.compiled import define, per_type
from a2a_grpc.core.errors import FieldViolation, InvalidParamsError
from a2a_grpc.generated.a2a_pb2 import Part, TaskPushNotificationConfig


@cache
def _required(desc: Descriptor) -> tuple[FieldDescriptor, ...]:
    marks = field_behavior_pb2.field_behavior
    return tuple(
        f for f in desc.fields if field_behavior_pb2.REQUIRED in f.GetOptions().Extensions[marks]
    )


def _is_set(msg: ProtoMessage, f: FieldDescriptor) -> bool:
    if f.is_repeated:
        return len(getattr(msg, f.name)) > 0
    if f.message_type is not None:
        return msg.HasField(f.name)
    return bool(getattr(msg, f.name))  # "" / 0 / UNSPECIFIED count as unset


@cache
def _descends(f: FieldDescriptor) -> bool:
    """Are `f`'s values messages whose own fields are checked?"""
    sub = f.message_type
    return (sub is not None and not sub.GetOptions().map_entry
            and not sub.full_name.startswith("google.protobuf."))


def _check(msg: ProtoMessage, path: str, found: list[FieldViolation]) -> None:
    # Plain recursion into a list: this runs on every request, and generators
    # nested per level cost more than the checks themselves.
    desc = msg.DESCRIPTOR
    for f in _required(desc):
        if not _is_set(msg, f):
            found.append(FieldViolation(f"{path}{f.json_name}", "is required"))
    extra = _EXTRA.get(desc.full_name)
    if extra is not None:
        found.extend(extra(msg, path))
    for f, value in msg.ListFields():
        if not _descends(f):
            continue
        if f.is_repeated:
            for i, item in enumerate(value):
                _check(item, f"{path}{f.json_name}[{i}].", found)
        else:
            _check(value, f"{path}{f.json_name}.", found)


def _part_has_content(msg: ProtoMessage, path: str) -> Iterator[FieldViolation]:
    assert isinstance(msg, Part)
    if msg.WhichOneof("content") is None:
        where = path.rstrip(".") or "part"
        yield FieldViolation(where, "a part needs one of text, raw, url or data")


def _push_url(msg: ProtoMessage, path: str) -> Iterator[FieldViolation]:
    assert isinstance(msg, TaskPushNotificationConfig)
    url = msg.url
    if url and not (url.startswith("https://") or url.startswith("http://")):
        yield FieldViolation(f"{path}url", "must be an absolute http(s) URL")


_EXTRA = {
    Part.DESCRIPTOR.full_name: _part_has_content,
    TaskPushNotificationConfig.DESCRIPTOR.full_name: _push_url,
}


# The walk above names every violation, at the price of building a path for
# each field it visits. A valid request (nearly all of them) is first told
# apart by a checker compiled per message type, like the printers of
# bridge/protojson.py: one test per REQUIRED field and per rule of `_EXTRA`,
# then the same for each set message field whose type has anything to check;
# no paths, no descriptors. Only a request it refuses is walked, and the walk
# alone decides what is wrong (tests/property/test_validate_fast.py holds the
# two equal on every A2A message type).
Checker = Callable[[ProtoMessage], bool]
_checkers: dict[str, Callable[[Any], Any]] = {}
_EXTRA_CODE = {
    Part.DESCRIPTOR.full_name: ["    if msg.WhichOneof('content') is None:",
                                "        return False"],
    TaskPushNotificationConfig.DESCRIPTOR.full_name: [
        "    url = msg.url",
        "    if url and not (url.startswith('https://') or url.startswith('http://')):",
        "        return False"],
}
assert _EXTRA_CODE.keys() == _EXTRA.keys()  # each rule has its compiled twin


def _has_rules(desc: Descriptor, seen: frozenset[str] = frozenset()) -> bool:
    """Is there anything to check in a `desc`, at any depth?"""
    if desc.full_name in seen:
        return False  # a cycle adds no rule of its own
    if _required(desc) or desc.full_name in _EXTRA:
        return True
    inner = seen | {desc.full_name}
    return any(f.message_type is not None and _descends(f) and _has_rules(f.message_type, inner)
               for f in desc.fields)


def _checker(desc: Descriptor) -> Checker:
    return per_type(_checkers, desc, _compile_checker)


def _compile_checker(desc: Descriptor) -> Checker:
    namespace: dict[str, object] = {}
    lines = ["def check(msg):"]
    for f in _required(desc):
        if f.is_repeated or f.message_type is None:  # "", 0, UNSPECIFIED, [] are unset
            lines += [f"    if not msg.{f.name}:", "        return False"]
        else:
            lines += [f"    if not msg.HasField({f.name!r}):", "        return False"]
    lines += _EXTRA_CODE.get(desc.full_name, [])
    for i, f in enumerate(desc.fields):
        sub = f.message_type
        if sub is None or not (_descends(f) and _has_rules(sub)):
            continue
        namespace[f"c{i}"] = _checker(sub)
        if f.is_repeated:
            lines += [f"    for item in msg.{f.name}:", f"        if not c{i}(item):",
                      "            return False"]
        else:
            lines += [f"    if msg.HasField({f.name!r}) and not c{i}(msg.{f.name}):",
                      "        return False"]
    lines.append("    return True")
    return define(lines, namespace, "check")


def is_valid(request: ProtoMessage) -> bool:
    """Would `validate` accept `request`? (The compiled checker alone.)"""
    desc: Descriptor = request.DESCRIPTOR  # type: ignore[assignment]  # upb's or the Python one
    return _checker(desc)(request)


def violations(request: ProtoMessage) -> list[FieldViolation]:
    """Every missing or malformed field of `request` (the walk alone)."""
    found: list[FieldViolation] = []
    _check(request, "", found)
    return found


def validate(request: ProtoMessage) -> None:
    """Raise InvalidParamsError naming every missing or malformed field."""
    if is_valid(request):
        return
    found = violations(request)
    if found:
        summary = "; ".join(f"{v.field} {v.description}" for v in found[:5])
        raise InvalidParamsError(f"invalid request: {summary}", violations=found)


def require(condition: bool, field: str, description: str) -> None:
    """Raise InvalidParamsError for one field unless `condition` holds."""
    if not condition:
        raise InvalidParamsError(
            f"invalid request: {field} {description}",
            violations=[FieldViolation(field, description)],
        )
