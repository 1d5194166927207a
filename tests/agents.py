"""Agents that test processes load with `a2a-grpc serve --agent tests.agents:NAME`."""

from __future__ import annotations

import asyncio

from a2a_grpc.agent import AgentExecutor, RequestContext, TaskEvents
from a2a_grpc.core.errors import TaskNotCancelableError
from a2a_grpc.demos.demo import DemoAgent
from a2a_grpc.generated.a2a_pb2 import AgentCapabilities, AgentCard, Task


class PushEnabledDemo(DemoAgent):
    """The demo agent with push-notification configs switched on (CRUD only)."""

    def __init__(self) -> None:
        super().__init__()
        self.card.capabilities.push_notifications = True


class FilesDemo(DemoAgent):
    """The demo agent, its card also taking images and PDFs (what the seed
    examples attach): the demo's own card takes text alone."""

    def __init__(self) -> None:
        super().__init__()
        self.card.default_input_modes.extend(["image/*", "application/pdf"])


class HandOffAgent(AgentExecutor):
    """Hands tasks off and takes follow-ups, as the tests script it by text:

    - `handoff`: WORKING, then hands the task off (the work goes on elsewhere).
    - `listen`: WORKING, then takes the follow-ups sent while it runs, answering
      each with an artifact `got: T`, until one says `done` (then COMPLETED).
    - `hold`: WORKING, then waits until `release()`, then hands the task off.
    - a follow-up run on a task (no keyword): an artifact `later: T`, then
      COMPLETED; `finish` too.
    """

    def __init__(self) -> None:
        import asyncio

        self.card = card_for_handoff()
        self.released = asyncio.Event()
        self.holding = asyncio.Event()

    def release(self) -> None:
        self.released.set()

    async def execute(self, context: RequestContext, events: TaskEvents) -> None:
        text = context.text.strip()
        if context.task is not None:  # a follow-up that got a run of its own
            await events.working()
            await events.artifact(f"later: {text}", name="later")
            await events.complete()
        elif text == "handoff":
            await events.working("handed off")
            await events.hand_off()
        elif text == "listen":
            await events.working("listening")
            async for follow_up in context.follow_ups:
                said = "\n".join(p.text for p in follow_up.parts)
                await events.artifact(f"got: {said}", name="got")
                if said == "done":
                    await events.complete()
                    return
        elif text == "hold":
            await events.working("holding")
            self.holding.set()
            await self.released.wait()
            await events.hand_off()
        else:
            await events.working()
            await events.complete(f"echo: {text}")


def card_for_handoff() -> AgentCard:
    return AgentCard(name="hand-off", description="Hands tasks off.", version="1",
                     capabilities=AgentCapabilities(streaming=True, push_notifications=True),
                     default_input_modes=["text/plain"], default_output_modes=["text/plain"])


class PacedAgent(DemoAgent):
    """The demo agent, with two paces more for timing-sensitive process tests:

    - `quiet S`: WORKING, then nothing at all for S seconds (a stream lives on
      keep-alives only), then an artifact `echo: quiet S` and COMPLETED.
    - `tick N S`: WORKING, then a note every S seconds, N of them, then an
      artifact `echo: tick N S` and COMPLETED.
    Anything else: as the demo agent.
    """

    async def execute(self, context: RequestContext, events: TaskEvents) -> None:
        text = context.text.strip()
        word, *args = text.split()
        if context.task is None and word in ("quiet", "tick"):
            numbers = [float(a) for a in args]
            count, every = (1, numbers[0]) if word == "quiet" else (int(numbers[0]), numbers[1])
            await events.working()
            for i in range(count):
                await asyncio.sleep(every)
                if word == "tick":
                    await events.working(f"tick {i + 1}/{count}")
            await events.artifact(f"echo: {text}", name="echo")
            await events.complete()
            return
        await super().execute(context, events)


class StubbornDemo(DemoAgent):
    """The demo agent, whose runs cannot be canceled: cancel() refuses while
    this process runs the task (as an agent that keeps its runs in memory
    does; elsewhere it has nothing to refuse with)."""

    def __init__(self) -> None:
        super().__init__()
        self._running: set[str] = set()

    async def execute(self, context: RequestContext, events: TaskEvents) -> None:
        self._running.add(context.task_id)
        try:
            await super().execute(context, events)
        finally:
            self._running.discard(context.task_id)

    async def cancel(self, task: Task, events: TaskEvents) -> None:
        if task.id in self._running:
            raise TaskNotCancelableError(f"task {task.id} finishes what it started",
                                         metadata={"taskId": task.id})
