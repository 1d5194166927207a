"""The conformance agent: the profile every SDK's conformance agent has, for the
official TCK (`make tck`).

`a2a-grpc serve --agent a2a_grpc.demos.conformance:ConformanceAgent`

- A new message makes a task SUBMITTED, then WORKING, and the run hands the
  task off: the work goes on "elsewhere" (here: nowhere), so the task stays
  WORKING until a client cancels it or sends more.
- A follow-up message on the task moves it to WORKING again and hands it off
  again.
- A message whose messageId starts with `test-subscribe-message-id` or
  `test-resubscribe-message-id` holds the task SUBMITTED for
  RESUBSCRIBE_TIMEOUT_MS (environment, default 3000) first, so that the
  suite can subscribe to a task that is still going.
"""

from __future__ import annotations

import asyncio
import os

from a2a_grpc.agent import AgentExecutor, RequestContext, TaskEvents
from a2a_grpc.generated.a2a_pb2 import AgentCapabilities, AgentCard, AgentSkill

HOLD_PREFIXES = ("test-subscribe-message-id", "test-resubscribe-message-id")


class ConformanceAgent(AgentExecutor):
    def __init__(self) -> None:
        self.card = AgentCard(
            name="a2a-grpc conformance agent",
            description="Starts every task and hands it off (the conformance-suite profile).",
            version="1.0.0",
            capabilities=AgentCapabilities(streaming=True, push_notifications=True),
            # What the conformance suites send (text, JSON data, bytes, text files);
            # any other type is refused with ContentTypeNotSupportedError, as they test.
            default_input_modes=["text/plain", "application/json", "application/octet-stream",
                                 "text/*"],
            default_output_modes=["text/plain"],
            skills=[AgentSkill(id="hand-off", name="Hand off",
                               description="Moves a task to WORKING and leaves it there.",
                               tags=["conformance"], examples=["hello"])],
        )

    async def execute(self, context: RequestContext, events: TaskEvents) -> None:
        if context.task is None:
            await events.submit()
            if context.message.message_id.startswith(HOLD_PREFIXES):
                await asyncio.sleep(_hold_seconds())
        await events.working()
        await events.hand_off()


def _hold_seconds() -> float:
    raw = os.environ.get("RESUBSCRIBE_TIMEOUT_MS", "3000")
    try:
        return max(float(raw), 0.0) / 1000
    except ValueError:
        return 3.0
