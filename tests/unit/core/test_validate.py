"""Required fields come from the proto's REQUIRED marks (spec §5.7)."""

from __future__ import annotations

import pytest

from a2a_grpc.core.errors import InvalidParamsError
from a2a_grpc.core.validate import validate
from a2a_grpc.generated.a2a_pb2 import (
    GetTaskRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    TaskPushNotificationConfig,
)


def fields(request: object) -> list[str]:
    with pytest.raises(InvalidParamsError) as info:
        validate(request)  # type: ignore[arg-type]
    return [v.field for v in info.value.violations]


def good_message() -> Message:
    return Message(message_id="m", role=Role.ROLE_USER, parts=[Part(text="hi")])


def test_a_complete_request_passes() -> None:
    validate(SendMessageRequest(message=good_message()))


def test_missing_message() -> None:
    assert fields(SendMessageRequest()) == ["message"]


@pytest.mark.parametrize(("clear", "field"), [
    ("message_id", "message.messageId"), ("role", "message.role"), ("parts", "message.parts"),
])
def test_each_required_message_field(clear: str, field: str) -> None:
    msg = good_message()
    msg.ClearField(clear)
    assert fields(SendMessageRequest(message=msg)) == [field]


def test_a_part_needs_content() -> None:
    msg = good_message()
    msg.parts.append(Part(media_type="text/plain"))
    assert fields(SendMessageRequest(message=msg)) == ["message.parts[1]"]


def test_nested_push_config_is_checked() -> None:
    req = SendMessageRequest(message=good_message(), configuration=SendMessageConfiguration(
        task_push_notification_config=TaskPushNotificationConfig(token="t")))
    assert fields(req) == ["configuration.taskPushNotificationConfig.url"]


def test_push_url_must_be_http() -> None:
    assert fields(TaskPushNotificationConfig(url="ftp://x/y")) == ["url"]
    validate(TaskPushNotificationConfig(url="https://example.com/hook"))


def test_all_violations_are_reported_together() -> None:
    assert fields(SendMessageRequest(message=Message())) == [
        "message.messageId", "message.role", "message.parts"]
    assert fields(GetTaskRequest()) == ["id"]
