"""Request validation: the proto's REQUIRED marks plus a few rules it can't say.

Spec §5.7: a field marked `(google.api.field_behavior) = REQUIRED` must be
set, and a required list must have at least one element. The marks are read
from the descriptors, so the rule follows the proto. What the marks can't
express is listed in `_EXTRA`. Every failure is an InvalidParamsError whose
violations name the fields by their JSON path (`message.parts[0]`), never an
internal error.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache

from google.api import field_behavior_pb2
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message as ProtoMessage

from generated.a2a_pb2 import Part, TaskPushNotificationConfig

from .errors import FieldViolation, InvalidParamsError


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


def validate(request: ProtoMessage) -> None:
    """Raise InvalidParamsError naming every missing or malformed field."""
    found: list[FieldViolation] = []
    _check(request, "", found)
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
