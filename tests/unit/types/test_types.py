"""`a2a_grpc.types` is the public place for the A2A message types: every
message, enum and enum value of the published a2a.proto, under the private
package that lets them share a process with the official SDK."""

from __future__ import annotations

from google.protobuf import struct_pb2, timestamp_pb2

from a2a_grpc import types
from a2a_grpc.core.published import PREFIX, published_file, published_name
from a2a_grpc.generated import a2a_pb2


def test_every_message_enum_and_value_is_there() -> None:
    file = a2a_pb2.DESCRIPTOR
    wanted = {*file.message_types_by_name, *file.enum_types_by_name}
    wanted |= {v.name for e in file.enum_types_by_name.values() for v in e.values}
    assert set(types.__all__) == wanted
    for name in wanted:
        assert getattr(types, name) is getattr(a2a_pb2, name)


def test_private_names_and_published_ones() -> None:
    assert types.Task.DESCRIPTOR.full_name == PREFIX + "lf.a2a.v1.Task"
    assert published_name(types.Task.DESCRIPTOR.full_name) == "lf.a2a.v1.Task"
    assert published_name("google.protobuf.Struct") == "google.protobuf.Struct"
    published = published_file(a2a_pb2.DESCRIPTOR)
    assert published.package == "lf.a2a.v1"
    refs = [f.type_name for m in published.message_type for f in m.field if f.type_name]
    refs += [x for s in published.service for m in s.method for x in (m.input_type,
                                                                        m.output_type)]
    assert refs and not [r for r in refs if PREFIX in r]
    assert ".lf.a2a.v1.Task" in refs and ".google.protobuf.Struct" in refs


def test_well_known_types_are_the_shared_ones() -> None:
    meta = struct_pb2.Struct()
    meta.update({"k": "v"})
    message = types.Message(metadata=meta)
    assert type(message.metadata) is struct_pb2.Struct
    status = types.TaskStatus(timestamp=timestamp_pb2.Timestamp(seconds=5))
    assert status.timestamp.seconds == 5
