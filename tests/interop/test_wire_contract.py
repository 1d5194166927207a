"""Our proto against the one the official SDK was generated from.

The official a2a-sdk ships `a2a_pb2`, compiled from the published A2A 1.0
`a2a.proto`. Its descriptor, read in the SDK's own virtualenv, must equal ours
in everything that reaches the wire or the bindings: package, every message,
field (name, number, type, label, type name, oneof, optional) and REQUIRED
mark, every enum value, and every RPC with its streaming flag and
`google.api.http` rule. Only the file name and comments may differ, and the
A2A 1.1 draft's fields (PREVIEW), which are checked against the draft's names,
numbers and types and then set aside.

The same for proto/a2a_v03.proto against the 0.3 SDK's `a2a.grpc.a2a_pb2`
(the 0.3.0 release), on what reaches the wire: names, numbers, types, labels,
oneofs and JSON names (its HTTP rules and REQUIRED marks are not ours to
keep: bridge/legacy/rest03.py routes 0.3's HTTP+JSON).
"""

from __future__ import annotations

import base64
import subprocess
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import descriptor_pb2

from a2a_grpc.core.published import PREFIX, published_file
from a2a_grpc.generated import a2a_pb2, a2a_v03_pb2

PEERS = Path(__file__).parent / "peers"
pytestmark = pytest.mark.interop


# The fields the A2A 1.1 draft adds (a2aproject/A2A dev-1.1, #1810): message,
# field, number, type, proto3 `optional`. Served only to A2A-Version 1.1 calls.
I64 = descriptor_pb2.FieldDescriptorProto.TYPE_INT64
PREVIEW = (("SendMessageConfiguration", "if_generation_match", 5, I64, True),
           ("Task", "generation", 7, I64, False),
           ("TaskStatusUpdateEvent", "generation", 5, I64, False),
           ("TaskArtifactUpdateEvent", "generation", 7, I64, False),
           ("GetTaskRequest", "current_generation", 4, I64, True))


def _without_preview(fd: descriptor_pb2.FileDescriptorProto) -> None:
    """Check the draft's fields are ours as drafted, then remove them (and the
    synthetic oneof of an `optional` one)."""
    messages = {m.name: m for m in fd.message_type}
    for message, name, number, kind, optional in PREVIEW:
        m = messages[message]
        [field] = [f for f in m.field if f.name == name]
        assert (field.number, field.type, field.proto3_optional) == (number, kind, optional)
        m.field.remove(field)
        if optional:
            assert m.oneof_decl[-1].name == f"_{name}"  # synthetic oneofs come last
            del m.oneof_decl[-1]


def _contract(fd: descriptor_pb2.FileDescriptorProto) -> descriptor_pb2.FileDescriptorProto:
    out = descriptor_pb2.FileDescriptorProto()
    out.package = fd.package
    out.dependency.extend(fd.dependency)
    out.message_type.extend(fd.message_type)
    out.enum_type.extend(fd.enum_type)
    out.service.extend(fd.service)
    return out


def _fill_json_names(protos: Iterable[descriptor_pb2.DescriptorProto], prefix: str,
                     pool: Any = a2a_pb2.DESCRIPTOR.pool) -> None:
    """CopyToProto leaves json_name out; take it from the live descriptors so
    the comparison covers the JSON names too."""
    for proto in protos:
        live = pool.FindMessageTypeByName(prefix + proto.name)
        for field in proto.field:
            field.json_name = live.fields_by_name[field.name].json_name
        _fill_json_names(proto.nested_type, f"{prefix}{proto.name}.", pool)


def _official(python: Path, *module: str) -> descriptor_pb2.FileDescriptorProto:
    done = subprocess.run([str(python), str(PEERS / "sdk_descriptor.py"), *module],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return descriptor_pb2.FileDescriptorProto.FromString(base64.b64decode(done.stdout))


def _wire_only(fd: descriptor_pb2.FileDescriptorProto) -> descriptor_pb2.FileDescriptorProto:
    """What reaches the wire: no options, no imports only they needed."""
    out = _contract(fd)
    del out.dependency[:]
    stack: list[Any] = list(out.message_type)
    while stack:
        m = stack.pop()
        m.ClearField("options")
        for f in m.field:
            f.ClearField("options")
        stack.extend(m.nested_type)
    for method in out.service[0].method:
        method.ClearField("options")
    return out


def _assert_same(o: descriptor_pb2.FileDescriptorProto,
                 t: descriptor_pb2.FileDescriptorProto, rpcs: int) -> None:
    # Piece by piece first, for a readable failure.
    assert [m.name for m in o.message_type] == [m.name for m in t.message_type]
    for mine, official in zip(o.message_type, t.message_type, strict=True):
        assert mine == official, f"message {official.name} differs"
    assert list(o.enum_type) == list(t.enum_type)
    for mine_m, official_m in zip(o.service[0].method, t.service[0].method, strict=True):
        assert mine_m == official_m, f"rpc {official_m.name} differs"
    assert o == t
    assert len(o.service[0].method) == rpcs


def test_our_03_descriptor_equals_the_03_release(sdk03_python: Path) -> None:
    theirs = _official(sdk03_python, "a2a.grpc.a2a_pb2")
    ours = published_file(a2a_v03_pb2.DESCRIPTOR)  # as on the wire (a2a_grpc.core.published)
    _fill_json_names(ours.message_type, PREFIX + "a2a.v1.", a2a_v03_pb2.DESCRIPTOR.pool)
    assert theirs.package == ours.package == "a2a.v1"
    _assert_same(_wire_only(ours), _wire_only(theirs), rpcs=10)


def test_our_descriptor_equals_the_official_one(sdk_python: Path) -> None:
    theirs = _official(sdk_python)
    ours = published_file(a2a_pb2.DESCRIPTOR)  # as on the wire (a2a_grpc.core.published)
    _fill_json_names(ours.message_type, PREFIX + "lf.a2a.v1.")
    _without_preview(ours)
    assert theirs.package == ours.package == "lf.a2a.v1"
    _assert_same(_contract(ours), _contract(theirs), rpcs=11)
