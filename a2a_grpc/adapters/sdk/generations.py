"""The official SDK's two generations, each as the executor sees it: its
types, its RequestContext and ServerCallContext, its errors.

- 1.x (`a2a.types.StreamResponse` exists): protobuf classes of `lf.a2a.v1`,
  ours under another package: a message crosses as its bytes, identical.
- 0.3: pydantic models in A2A 0.3's JSON shape: a message crosses as JSON,
  through the same translation our 0.3 edge uses (a2a_grpc/legacy/json03.py).

Only imported once an executor of the SDK is given: `a2a` is then installed.
"""

from __future__ import annotations

import importlib.metadata
from typing import Any

from google.protobuf import json_format

from a2a_grpc.agent import RequestContext
from a2a_grpc.cards.written import card_of
from a2a_grpc.core import errors
from a2a_grpc.generated.a2a_pb2 import (
    AgentCard,
    Message,
    SendMessageRequest,
    StreamResponse,
    Task,
)
from a2a_grpc.legacy import json03

# The SDK's event classes (both generations name them alike) -> StreamResponse's field.
FIELDS = {"Task": "task", "Message": "message", "TaskStatusUpdateEvent": "status_update",
          "TaskArtifactUpdateEvent": "artifact_update"}
# The SDK's error class names that ours spell otherwise.
RENAMED = {"JSONParseError": "ParseError",
           "AuthenticatedExtendedCardNotConfiguredError": "ExtendedAgentCardNotConfiguredError"}


def is_v1() -> bool:
    import a2a.types

    return hasattr(a2a.types, "StreamResponse")


def caller_class(user_class: type) -> type:
    """The SDK's User for our caller (made once): authenticated when a scheme
    admitted one, its subject the user name."""

    class Caller(user_class):  # type: ignore[misc]
        def __init__(self, subject: str) -> None:
            self._subject = subject

        @property
        def is_authenticated(self) -> bool:
            return bool(self._subject)

        @property
        def user_name(self) -> str:
            return self._subject

    return Caller


def error_in(exc: BaseException) -> errors.A2AError | None:
    """The SDK's error (1.x's A2AError, 0.3's ServerError(error=...)) as ours."""
    inner = getattr(exc, "error", None) if type(exc).__name__ == "ServerError" else exc
    if inner is None or not type(inner).__module__.startswith("a2a."):
        return None
    name = RENAMED.get(type(inner).__name__, type(inner).__name__)
    ours = getattr(errors, name, None)
    if not (isinstance(ours, type) and issubclass(ours, errors.A2AError)):
        ours = errors.InternalError
    message = getattr(inner, "message", None)
    return ours(message if isinstance(message, str) and message else None)


class _Sdk:
    """What both generations name alike: the modules the executor's classes come from."""

    def __init__(self) -> None:
        import a2a.types
        from a2a.auth.user import User
        from a2a.server.agent_execution import RequestContext as SdkContext
        from a2a.server.context import ServerCallContext
        from a2a.server.events import EventQueue

        self.types, self.caller = a2a.types, caller_class(User)
        self.context_class, self.call_class = SdkContext, ServerCallContext
        self.queue_class = EventQueue
        self.task_first = False  # a status or artifact event before any Task creates it

    @staticmethod
    def not_an_event(event: Any) -> errors.InvalidAgentResponseError:
        return errors.InvalidAgentResponseError(
            f"the executor sent a {type(event).__name__}, not a Task, Message, "
            "TaskStatusUpdateEvent or TaskArtifactUpdateEvent")


class V1(_Sdk):
    """a2a-sdk 1.x."""

    name = "1.x"

    def __init__(self) -> None:
        super().__init__()
        # 1.0.0 and later (DefaultRequestHandler v2) want the Task before any other
        # task event; its pre-releases (1.0.0aN, what the 1.0-dev kit's agent is
        # written for) created the task from the first event, as 0.3 does.
        try:
            version = importlib.metadata.version("a2a-sdk")
        except importlib.metadata.PackageNotFoundError:
            version = "1"
        self.task_first = not any(c.isalpha() for c in version)

    def event_in(self, event: Any) -> StreamResponse:
        field = FIELDS.get(type(event).__name__)
        if field is None or not hasattr(event, "SerializeToString"):
            raise self.not_an_event(event)
        out = StreamResponse()
        getattr(out, field).MergeFromString(event.SerializeToString())
        return out

    def task_out(self, task: Task) -> Any:
        return self.types.Task.FromString(task.SerializeToString())

    def card_in(self, card: Any) -> AgentCard:
        return AgentCard.FromString(card.SerializeToString())

    def call_context(self, context: RequestContext | None, *, user: str, tenant: str,
                     headers: dict[str, str]) -> Any:
        return self.call_class(
            user=self.caller(user), tenant=tenant,
            requested_extensions=set(context.requested_extensions) if context else set(),
            state={"headers": headers})

    def request_context(self, context: RequestContext, task: Task | None,
                        call: Any) -> Any:
        request = SendMessageRequest(message=context.message, tenant=context.call.tenant,
                                     configuration=context.configuration,
                                     metadata=context.metadata)
        return self.context_class(
            call_context=call,
            request=self.types.SendMessageRequest.FromString(request.SerializeToString()),
            task_id=context.task_id, context_id=context.context_id,
            task=self.task_out(task) if task is not None else None,
            related_tasks=[self.task_out(t) for t in context.referenced_tasks])

    def cancel_context(self, task: Task, call: Any) -> Any:
        return self.context_class(call_context=call, task_id=task.id,
                                  context_id=task.context_id, task=self.task_out(task))


class V03(_Sdk):
    """a2a-sdk 0.3.x."""

    name = "0.3"

    def event_in(self, event: Any) -> StreamResponse:
        if type(event).__name__ not in FIELDS or not hasattr(event, "model_dump"):
            raise self.not_an_event(event)
        raw = event.model_dump(mode="json", by_alias=True, exclude_none=True)
        try:
            return json_format.ParseDict(json03.event_in(raw), StreamResponse(),
                                         ignore_unknown_fields=True)
        except (errors.InvalidParamsError, json_format.ParseError) as exc:
            raise errors.InvalidAgentResponseError(
                f"the executor's {type(event).__name__} is not valid A2A: {exc}") from None

    def task_out(self, task: Task) -> Any:
        return self.types.Task.model_validate(
            json03.task_out(json_format.MessageToDict(task)))

    def message_out(self, message: Message) -> Any:
        return self.types.Message.model_validate(
            json03.message_out(json_format.MessageToDict(message)))

    def card_in(self, card: Any) -> AgentCard:
        return card_of(card.model_dump(mode="json", by_alias=True, exclude_none=True))

    def call_context(self, context: RequestContext | None, *, user: str, tenant: str,
                     headers: dict[str, str]) -> Any:
        return self.call_class(
            user=self.caller(user),
            requested_extensions=set(context.requested_extensions) if context else set(),
            state={"headers": headers})

    def request_context(self, context: RequestContext, task: Task | None,
                        call: Any) -> Any:
        params: dict[str, Any] = {
            "message": json03.message_out(json_format.MessageToDict(context.message)),
            "configuration": json03.configuration_out(
                json_format.MessageToDict(context.configuration))}
        if context.metadata.fields:
            params["metadata"] = json_format.MessageToDict(context.metadata)
        current = None
        if task is not None:  # 0.3's handler adds the new message to the history first
            seen = Task()
            seen.CopyFrom(task)
            if seen.status.HasField("message"):
                seen.history.append(seen.status.message)
                seen.status.ClearField("message")
            seen.history.append(context.message)
            current = self.task_out(seen)
        return self.context_class(
            request=self.types.MessageSendParams.model_validate(params),
            task_id=context.task_id, context_id=context.context_id, task=current,
            related_tasks=[self.task_out(t) for t in context.referenced_tasks],
            call_context=call)

    def cancel_context(self, task: Task, call: Any) -> Any:
        # 0.3's handler gives cancel() no request and no call context.
        return self.context_class(None, task_id=task.id, context_id=task.context_id,
                                  task=self.task_out(task))


Generation = V1 | V03


def current() -> Generation:
    """The generation of the a2a-sdk installed here."""
    return V1() if is_v1() else V03()
