from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Instruction(_message.Message):
    __slots__ = ("call_agent", "return_response", "steps")
    CALL_AGENT_FIELD_NUMBER: _ClassVar[int]
    RETURN_RESPONSE_FIELD_NUMBER: _ClassVar[int]
    STEPS_FIELD_NUMBER: _ClassVar[int]
    call_agent: CallAgent
    return_response: ReturnResponse
    steps: SeriesOfSteps
    def __init__(self, call_agent: _Optional[_Union[CallAgent, _Mapping]] = ..., return_response: _Optional[_Union[ReturnResponse, _Mapping]] = ..., steps: _Optional[_Union[SeriesOfSteps, _Mapping]] = ...) -> None: ...

class SendMessageBehavior(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class PushNotificationBehavior(_message.Message):
    __slots__ = ("url",)
    URL_FIELD_NUMBER: _ClassVar[int]
    url: str
    def __init__(self, url: _Optional[str] = ...) -> None: ...

class ResubscribeBehavior(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class CallAgent(_message.Message):
    __slots__ = ("transport", "agent_card_uri", "instruction", "streaming", "send_message", "push_notification", "resubscribe")
    TRANSPORT_FIELD_NUMBER: _ClassVar[int]
    AGENT_CARD_URI_FIELD_NUMBER: _ClassVar[int]
    INSTRUCTION_FIELD_NUMBER: _ClassVar[int]
    STREAMING_FIELD_NUMBER: _ClassVar[int]
    SEND_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    PUSH_NOTIFICATION_FIELD_NUMBER: _ClassVar[int]
    RESUBSCRIBE_FIELD_NUMBER: _ClassVar[int]
    transport: str
    agent_card_uri: str
    instruction: Instruction
    streaming: bool
    send_message: SendMessageBehavior
    push_notification: PushNotificationBehavior
    resubscribe: ResubscribeBehavior
    def __init__(self, transport: _Optional[str] = ..., agent_card_uri: _Optional[str] = ..., instruction: _Optional[_Union[Instruction, _Mapping]] = ..., streaming: _Optional[bool] = ..., send_message: _Optional[_Union[SendMessageBehavior, _Mapping]] = ..., push_notification: _Optional[_Union[PushNotificationBehavior, _Mapping]] = ..., resubscribe: _Optional[_Union[ResubscribeBehavior, _Mapping]] = ...) -> None: ...

class ReturnResponse(_message.Message):
    __slots__ = ("response", "hold_task")
    RESPONSE_FIELD_NUMBER: _ClassVar[int]
    HOLD_TASK_FIELD_NUMBER: _ClassVar[int]
    response: str
    hold_task: bool
    def __init__(self, response: _Optional[str] = ..., hold_task: _Optional[bool] = ...) -> None: ...

class SeriesOfSteps(_message.Message):
    __slots__ = ("instructions", "response_generator")
    class ResponseGenerator(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        RESPONSE_GENERATOR_UNSPECIFIED: _ClassVar[SeriesOfSteps.ResponseGenerator]
        RESPONSE_GENERATOR_CONCAT: _ClassVar[SeriesOfSteps.ResponseGenerator]
    RESPONSE_GENERATOR_UNSPECIFIED: SeriesOfSteps.ResponseGenerator
    RESPONSE_GENERATOR_CONCAT: SeriesOfSteps.ResponseGenerator
    INSTRUCTIONS_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_GENERATOR_FIELD_NUMBER: _ClassVar[int]
    instructions: _containers.RepeatedCompositeFieldContainer[Instruction]
    response_generator: SeriesOfSteps.ResponseGenerator
    def __init__(self, instructions: _Optional[_Iterable[_Union[Instruction, _Mapping]]] = ..., response_generator: _Optional[_Union[SeriesOfSteps.ResponseGenerator, str]] = ...) -> None: ...
