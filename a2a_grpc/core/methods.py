"""The A2A methods, read once from the proto's service descriptor.

JSON-RPC method names are the RPC names (spec §5.3, §9); REST routes are the
methods' `google.api.http` rules (spec §11). Nothing here is written per
method: a new RPC in the proto appears on both bindings.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from google.api import annotations_pb2, http_pb2
from google.protobuf import message_factory
from google.protobuf.descriptor import MethodDescriptor
from google.protobuf.message import Message

from a2a_grpc.core.contract import python_name
from a2a_grpc.generated import a2a_pb2

SERVICE = a2a_pb2.DESCRIPTOR.services_by_name["A2AService"]


@dataclass(frozen=True, slots=True)
class Route:
    verb: str  # GET, POST, DELETE...
    template: str  # as in the proto, e.g. /tasks/{id=*}:cancel
    body: str  # "*" = the whole request, "" = none (query parameters)

    @property
    def path_fields(self) -> list[str]:
        return re.findall(r"\{(\w+)(?:=[^}]*)?\}", self.template)

    def aiohttp_path(self, prefix: str = "") -> str:
        """`/tasks/{id=*}:cancel` -> `/tasks/{id:[^/:]+}:cancel` (one path segment,
        and no ':' so the `:cancel` / `:subscribe` suffix stays outside)."""
        return prefix + re.sub(r"\{(\w+)(?:=[^}]*)?\}", r"{\1:[^/:]+}", self.template)


@dataclass(frozen=True, slots=True)
class Method:
    name: str  # SendMessage
    attr: str  # send_message, on an A2AService
    request: type[Message]
    response: type[Message]
    streaming: bool
    routes: tuple[Route, ...]


def _routes(method: MethodDescriptor) -> tuple[Route, ...]:
    rule = method.GetOptions().Extensions[annotations_pb2.http]
    return tuple(_route(r) for r in (rule, *rule.additional_bindings))


def _route(rule: http_pb2.HttpRule) -> Route:
    verb = rule.WhichOneof("pattern")
    assert verb is not None and verb != "custom", rule
    return Route(verb.upper(), getattr(rule, verb), rule.body)


def _method(m: MethodDescriptor) -> Method:
    return Method(
        name=m.name,
        attr=python_name(m.name),
        request=message_factory.GetMessageClass(m.input_type),
        response=message_factory.GetMessageClass(m.output_type),
        streaming=m.server_streaming,
        routes=_routes(m),
    )


METHODS: dict[str, Method] = {m.name: _method(m) for m in SERVICE.methods}
