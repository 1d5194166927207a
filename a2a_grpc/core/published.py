"""The A2A packages as published, and the private names our Python types have.

The official SDK (which ADK, Strands, Microsoft's and CrewAI's A2A support
bring) registers the published `lf.a2a.v1` (and, in its 0.3 line, `a2a.v1`)
in protobuf's default descriptor pool, where a name may be defined once. So
that both packages live in one process, `make proto` compiles our Python
types from copies of proto/*.proto whose package is prefixed with `PREFIX`
(`a2a_grpc.lf.a2a.v1`). Nothing on the wire names a package of ours:

- binary protobuf and ProtoJSON carry field numbers, JSON names and enum
  value names, none of which change (the protos use no `Any`);
- gRPC method paths are the published ones (`/lf.a2a.v1.A2AService/...`):
  the gRPC stubs are compiled from proto/ as it is, and the servicers
  register under `service_name`;
- server reflection describes the published files (`published_pool`), so
  grpcurl and other languages see `lf.a2a.v1.A2AService`.

Well-known types (Struct, Value, Timestamp) stay those of the default pool,
shared with every other package. The rename rule lives here alone; the
Makefile calls tools/private_protos.py, which uses `private_source`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache

from google.protobuf import descriptor_pb2, descriptor_pool
from google.protobuf.descriptor import FileDescriptor, ServiceDescriptor

PREFIX = "a2a_grpc."
_PACKAGE = re.compile(r"^package\s+([\w.]+)\s*;", re.MULTILINE)


def private_source(text: str) -> str:
    """A .proto source with its package made private (`PREFIX` + the package)."""
    return _PACKAGE.sub(lambda m: f"package {PREFIX}{m.group(1)};", text, count=1)


def published_name(full_name: str) -> str:
    """`a2a_grpc.lf.a2a.v1.Task` -> `lf.a2a.v1.Task`; other names as they are."""
    return full_name[len(PREFIX):] if full_name.startswith(PREFIX) else full_name


def service_name(service: ServiceDescriptor) -> str:
    """The service's published full name: what gRPC paths and health name."""
    return published_name(service.full_name)


def published_file(file: FileDescriptor) -> descriptor_pb2.FileDescriptorProto:
    """`file` as proto/ defines it: its package and every type it names published."""
    proto = descriptor_pb2.FileDescriptorProto()
    file.CopyToProto(proto)
    proto.package = published_name(proto.package)
    _publish_messages(proto.message_type)
    for service in proto.service:
        for method in service.method:
            method.input_type = _published_ref(method.input_type)
            method.output_type = _published_ref(method.output_type)
    return proto


def _published_ref(ref: str) -> str:
    """A type reference (`.a2a_grpc.lf.a2a.v1.Task`) published."""
    return "." + published_name(ref[1:]) if ref.startswith("." + PREFIX) else ref


def _publish_messages(messages: Iterable[descriptor_pb2.DescriptorProto]) -> None:
    for message in messages:
        for field in message.field:
            if field.type_name:
                field.type_name = _published_ref(field.type_name)
        _publish_messages(message.nested_type)


@cache
def published_pool(*files: FileDescriptor) -> descriptor_pool.DescriptorPool:
    """A pool of `files` as published, with everything they import (for server
    reflection: what a client of another language generates its code from)."""
    pool = descriptor_pool.DescriptorPool()
    added: set[str] = set()

    def add(file: FileDescriptor) -> None:
        if file.name in added:
            return
        for dependency in file.dependencies:
            add(dependency)
        added.add(file.name)
        pool.Add(published_file(file))

    for file in files:
        add(file)
    return pool
