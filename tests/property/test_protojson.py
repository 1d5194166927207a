"""bridge.protojson is protobuf's json_format, faster: the same output, the same
accepted inputs, the same parsed messages, on every A2A message type.

Messages are generated from the descriptors (every field kind, oneofs, maps,
Struct/Value/Timestamp, unknown enum numbers); JSON inputs are their
ProtoJSON, then mutated (wrong types, nulls, the other spelling of a key,
unknown keys, unknown enum names).
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from google.protobuf import json_format, message_factory
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message
from hypothesis import given, settings
from hypothesis import strategies as st

from a2a_grpc.bridge import codec, protojson
from a2a_grpc.generated import a2a_pb2 as pb

F = FieldDescriptor
TYPES = sorted(pb.DESCRIPTOR.message_types_by_name.values(), key=lambda d: d.name)
SETTINGS = settings(max_examples=60, deadline=None)
PRINT_SETTINGS = settings(max_examples=300, deadline=None)

json_scalars = st.none() | st.booleans() | st.integers(-2**40, 2**40) | st.text(max_size=8)
json_values = st.recursive(
    json_scalars | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner,
                                                                 max_size=3),
    max_leaves=8)
INT_RANGES = {F.TYPE_INT32: (-2**31, 2**31 - 1), F.TYPE_UINT32: (0, 2**32 - 1),
              F.TYPE_INT64: (-2**63, 2**63 - 1), F.TYPE_UINT64: (0, 2**64 - 1)}


def _scalar(draw: st.DrawFn, f: FieldDescriptor) -> Any:
    if f.type == F.TYPE_STRING:
        return draw(st.text(max_size=10))
    if f.type == F.TYPE_BOOL:
        return draw(st.booleans())
    if f.type == F.TYPE_BYTES:
        return draw(st.binary(max_size=10))
    if f.enum_type is not None:  # names, and numbers no name stands for (open enums)
        return draw(st.sampled_from([v.number for v in f.enum_type.values]) | st.integers(0, 99))
    low, high = INT_RANGES.get(f.type, (-2**31, 2**31 - 1))
    return draw(st.integers(low, high))


def _fill(draw: st.DrawFn, msg: Any, depth: int) -> None:
    desc = msg.DESCRIPTOR
    if desc.full_name == "google.protobuf.Struct":
        msg.update(draw(st.dictionaries(st.text(max_size=6), json_values, max_size=3)))
        return
    if desc.full_name == "google.protobuf.Value":
        json_format.ParseDict(draw(json_values), msg)  # type: ignore[arg-type]  # any JSON value
        return
    if desc.full_name == "google.protobuf.Timestamp":
        msg.seconds = draw(st.integers(0, 253402300799))
        msg.nanos = draw(st.sampled_from([0, 5_000_000, 7_000, 123_456_789]))
        return
    for f in desc.fields:
        if not draw(st.booleans()):
            continue
        sub = f.message_type
        if sub is not None and depth >= 3:
            continue
        value = getattr(msg, f.name)
        if sub is not None and sub.GetOptions().map_entry:
            for _ in range(draw(st.integers(0, 2))):
                key = draw(st.text(max_size=5))
                target = sub.fields_by_name["value"]
                if target.message_type is not None:
                    _fill(draw, value[key], depth + 1)
                else:
                    value[key] = _scalar(draw, target)
        elif sub is not None and f.is_repeated:
            for _ in range(draw(st.integers(0, 2))):
                _fill(draw, value.add(), depth + 1)
        elif sub is not None:
            value.SetInParent()
            _fill(draw, value, depth + 1)
        elif f.is_repeated:
            value.extend(_scalar(draw, f) for _ in range(draw(st.integers(0, 2))))
        else:
            setattr(msg, f.name, _scalar(draw, f))


@st.composite
def messages(draw: st.DrawFn) -> Message:
    desc = draw(st.sampled_from(TYPES))
    msg = message_factory.GetMessageClass(desc)()
    _fill(draw, msg, 0)
    return msg


@st.composite
def mutated(draw: st.DrawFn, data: Any, desc: Any) -> Any:
    """`data` with a few keys changed in type, spelling or presence."""
    if not isinstance(data, dict):
        return data
    out = copy.deepcopy(data)
    fields = {f.json_name: f for f in desc.fields}
    for key in list(out)[: draw(st.integers(0, 3))]:
        f = fields.get(key)
        move = draw(st.sampled_from(["type", "null", "rename", "both", "deeper", "enum"]))
        if move == "type":
            out[key] = draw(json_values)
        elif move == "null":
            out[key] = None
        elif move == "rename" and f is not None:
            out[f.name] = out.pop(key)
        elif move == "both" and f is not None:
            out[f.name] = out[key]
        elif move == "enum" and f is not None and f.enum_type is not None:
            out[key] = draw(st.sampled_from(["TASK_STATE_NOPE", "completed", "1", 1]))
        elif move == "deeper" and f is not None and f.message_type is not None:
            if isinstance(out[key], dict):
                out[key] = draw(mutated(out[key], f.message_type))
    if draw(st.booleans()):
        out[draw(st.text(max_size=6))] = draw(json_values)  # unknown key (or a known one)
    return out


@PRINT_SETTINGS
@given(msg=messages())
def test_printing_equals_json_format(msg: Message) -> None:
    printed, expected = protojson.to_dict(msg), json_format.MessageToDict(msg)
    assert printed == expected
    assert json.dumps(printed) == json.dumps(expected)  # keys in the same order, at every level


@SETTINGS
@given(msg=messages())
def test_printed_json_parses_back(msg: Message) -> None:
    data = json_format.MessageToDict(msg)
    if not isinstance(data, dict):
        return
    parsed = codec.parse(data, type(msg))
    assert parsed == json_format.ParseDict(data, type(msg)())


@SETTINGS
@given(data=st.data())
def test_fast_parse_accepts_only_what_json_format_accepts_alike(data: st.DataObject) -> None:
    msg = data.draw(messages())
    printed = json_format.MessageToDict(msg)
    sent = data.draw(mutated(printed, msg.DESCRIPTOR))
    if not isinstance(sent, dict):
        return
    try:
        fast = protojson.parse(sent, type(msg))
    except protojson.Fallback:
        return  # json_format decides (the codec's own path)
    desc: Any = msg.DESCRIPTOR
    reference = json_format.ParseDict(codec._known(sent, desc), type(msg)())
    assert fast == reference


@pytest.mark.parametrize(("sent", "why"), [
    ({"message": {"role": "completed"}}, "unknown enum name"),
    ({"message": {"messageId": 5}}, "number for a string"),
    ({"message": {"messageId": "a", "message_id": "b"}}, "one field under two names"),
    ({"message": {"parts": [{"text": "a", "url": "b"}]}}, "two members of a oneof"),
    ({"message": None}, "null"),
    ({"configuration": {"historyLength": "3"}}, "integer as a string"),
    ({"message": {"parts": [{"raw": "aGk="}]}}, "bytes"),
])
def test_what_the_fast_parser_leaves_to_json_format(sent: dict[str, Any], why: str) -> None:
    with pytest.raises(protojson.Fallback):
        protojson.parse(sent, pb.SendMessageRequest)


@settings(max_examples=500, deadline=None)
@given(st.integers(-2**40, 2**40) | st.integers(0, 253_402_300_799)
       | st.sampled_from([0, -1, -62_135_596_800, -62_135_596_801, 253_402_300_799,
                          253_402_300_800, 1_795_394_224]),
       st.integers(0, 999_999_999) | st.sampled_from([0, 1, 1000, 1_000_000, 123_000_000,
                                                    999_999_999, -1, 1_000_000_000]))
def test_timestamps_print_as_json_format_does(seconds: int, nanos: int) -> None:
    from google.protobuf.timestamp_pb2 import Timestamp

    ts = Timestamp(seconds=seconds, nanos=nanos)
    try:
        expected = ts.ToJsonString()
    except ValueError:
        with pytest.raises(ValueError):
            protojson._timestamp(ts)
        return
    assert protojson._timestamp(ts) == expected
