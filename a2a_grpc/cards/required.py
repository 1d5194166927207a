"""The keys a card must have, present even when empty: what the proto marks
REQUIRED (`google.api.field_behavior`), the same fields A2A 0.3's schema
requires (a card's `skills`, `defaultInputModes`, `defaultOutputModes`,
`capabilities`; a skill's `tags`). ProtoJSON leaves out an empty list or
string, and a 0.3 client (a2a-sdk 0.3's pydantic AgentCard) then refuses
the whole card; so the served JSON carries them, empty."""

from __future__ import annotations

from typing import Any

from google.api import field_behavior_pb2
from google.protobuf.descriptor import FieldDescriptor

from a2a_grpc.generated.a2a_pb2 import AgentCard

EMPTY = {FieldDescriptor.TYPE_STRING: "", FieldDescriptor.TYPE_BYTES: "",
         FieldDescriptor.TYPE_BOOL: False}


def with_required_keys(data: dict[str, Any], descriptor: Any = AgentCard.DESCRIPTOR,
                       ) -> None:
    """Add each REQUIRED key `data` lacks, empty, here and in the messages inside."""
    for field in descriptor.fields:
        inside = field.message_type
        value = data.get(field.json_name)
        if value is None and _required(field):
            value = data[field.json_name] = (
                [] if field.is_repeated else {} if inside is not None
                else EMPTY.get(field.type, 0))
        if inside is None or value is None or inside.GetOptions().map_entry:
            continue
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, dict):
                with_required_keys(item, inside)


def _required(field: FieldDescriptor) -> bool:
    return field_behavior_pb2.REQUIRED in field.GetOptions().Extensions[
        field_behavior_pb2.field_behavior]
