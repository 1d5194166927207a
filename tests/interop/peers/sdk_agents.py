"""Executors written for the official a2a-sdk 1.x, in the style of its samples
(a2a-samples' helloworld and its kin, the SDK's own sample). Served by the
SDK's own server (sdk_server.py, A2A_SDK_EXECUTOR) and by ours (`a2a-grpc
serve --agent sdk_agents:Samples`), driven alike by sdk_agent_client.py.

`Samples` hands each message to one of them by its first word: hello (the
helloworld pattern), ask (input-required, then a follow-up), chat (turns
kept per context), count N (an artifact in appended chunks), direct (a
Message answer), whoami (what the RequestContext says), slow (works until
canceled; cancel() ends it canceled), boom (raises after its Task),
refuse (raises the SDK's InvalidParamsError first), early (a status before
any Task: 1.x refuses it), raw (a Task, an artifact and a status built by
hand, no TaskUpdater), submitted (Microsoft Agent Framework's A2AExecutor:
the Task, then TaskUpdater.submit()), stubborn (the travel planner's and
headless auth samples' cancel(): it raises, saying it cannot cancel),
reject (the currency sample's refusal of what it does not do: rejected,
with a message).
"""

import asyncio

from a2a.helpers import (
    get_message_text,
    new_task,
    new_task_from_user_message,
    new_text_message,
    new_text_part,
)
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.tasks import TaskUpdater
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentSkill,
    Message,
    Role,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatusUpdateEvent,
)
from a2a.utils.errors import InvalidParamsError


async def start(context, queue):
    task = context.current_task
    if task is None:
        task = new_task_from_user_message(context.message)
        await queue.enqueue_event(task)
    return TaskUpdater(queue, task.id, task.context_id)


class HelloWorld(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = await start(context, event_queue)
        await updater.update_status(TaskState.TASK_STATE_WORKING,
                                    message=new_text_message("Processing request..."))
        text = get_message_text(context.message)
        await updater.add_artifact([new_text_part(f"Hello, World! ({text})",
                                                  media_type="text/plain")])
        await updater.update_status(TaskState.TASK_STATE_COMPLETED,
                                    message=new_text_message("Request is completed!"))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError("Cancel is not supported.")


class Ask(AgentExecutor):
    async def execute(self, context, event_queue):
        updater = await start(context, event_queue)
        if context.current_task is None:
            await updater.requires_input(updater.new_agent_message(
                [new_text_part("What is your name?")]))
            return
        seen = len(context.current_task.history)
        await updater.add_artifact([new_text_part(
            f"Hello {get_message_text(context.message)} (history {seen})")])
        await updater.complete()

    async def cancel(self, context, event_queue):
        raise NotImplementedError


class Chat(AgentExecutor):
    """A Message answer per turn; turns counted per context, as a chat keeps them."""

    def __init__(self):
        self.turns = {}

    async def execute(self, context, event_queue):
        n = self.turns[context.context_id] = self.turns.get(context.context_id, 0) + 1
        await event_queue.enqueue_event(new_text_message(
            f"turn {n}: {get_message_text(context.message)}", context_id=context.context_id))

    async def cancel(self, context, event_queue):
        raise NotImplementedError


class Count(AgentExecutor):
    async def execute(self, context, event_queue):
        updater = await start(context, event_queue)
        await updater.start_work()
        n = int(get_message_text(context.message).split()[1])
        for i in range(1, n + 1):
            await updater.add_artifact([new_text_part(f"{i}")], artifact_id="count",
                                       name="count", append=i > 1, last_chunk=i == n)
        await updater.complete()

    async def cancel(self, context, event_queue):
        raise NotImplementedError


class WhoAmI(AgentExecutor):
    async def execute(self, context, event_queue):
        updater = await start(context, event_queue)
        call = context.call_context
        said = (f"user={call.user.user_name or '-'} auth={call.user.is_authenticated} "
                f"tenant={context.tenant or '-'} "
                f"extensions={','.join(sorted(context.requested_extensions)) or '-'} "
                f"metadata={','.join(sorted(context.metadata)) or '-'} "
                f"input={context.get_user_input()}")
        await updater.add_artifact([new_text_part(said)], name="whoami")
        await updater.complete()

    async def cancel(self, context, event_queue):
        raise NotImplementedError


class Slow(AgentExecutor):
    async def execute(self, context, event_queue):
        updater = await start(context, event_queue)
        await updater.start_work(updater.new_agent_message([new_text_part("working")]))
        await asyncio.sleep(60)
        await updater.complete()

    async def cancel(self, context, event_queue):
        task = context.current_task
        await TaskUpdater(event_queue, task.id, task.context_id).cancel()


class Boom(AgentExecutor):
    async def execute(self, context, event_queue):
        await start(context, event_queue)
        raise RuntimeError("the model is down")

    async def cancel(self, context, event_queue):
        raise NotImplementedError


class Refuse(AgentExecutor):
    async def execute(self, context, event_queue):
        raise InvalidParamsError(message="say it differently")

    async def cancel(self, context, event_queue):
        raise NotImplementedError


class Early(AgentExecutor):
    async def execute(self, context, event_queue):
        await event_queue.enqueue_event(TaskStatusUpdateEvent(
            task_id=context.task_id, context_id=context.context_id,
            status={"state": TaskState.TASK_STATE_WORKING}))

    async def cancel(self, context, event_queue):
        raise NotImplementedError


class Raw(AgentExecutor):
    """Hand-built events, no TaskUpdater: a Task from a2a.helpers.new_task,
    an artifact event, a completed status."""

    async def execute(self, context, event_queue):
        await event_queue.enqueue_event(new_task(context.task_id, context.context_id,
                                                 TaskState.TASK_STATE_SUBMITTED,
                                                 history=[context.message]))
        await event_queue.enqueue_event(TaskArtifactUpdateEvent(
            task_id=context.task_id, context_id=context.context_id, last_chunk=True,
            artifact={"artifact_id": "raw", "parts": [new_text_part("raw events")]}))
        await event_queue.enqueue_event(TaskStatusUpdateEvent(
            task_id=context.task_id, context_id=context.context_id,
            status={"state": TaskState.TASK_STATE_COMPLETED,
                    "message": new_text_message("raw done")}))

    async def cancel(self, context, event_queue):
        raise NotImplementedError


class Submitted(AgentExecutor):
    """agent_framework_a2a.A2AExecutor's order: the Task, then submit(), then work."""

    async def execute(self, context, event_queue):
        task = new_task_from_user_message(context.message)
        await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        await updater.submit()
        await updater.start_work()
        await updater.add_artifact([new_text_part("submitted, then done")])
        await updater.complete()

    async def cancel(self, context, event_queue):
        task = context.current_task
        await TaskUpdater(event_queue, task.id, task.context_id).cancel()


class Stubborn(AgentExecutor):
    """Works a moment; its cancel() refuses, as the samples' that cannot cancel."""

    async def execute(self, context, event_queue):
        updater = await start(context, event_queue)
        await updater.start_work(updater.new_agent_message([new_text_part("working")]))
        await asyncio.sleep(1.5)
        await updater.add_artifact([new_text_part("finished anyway")])
        await updater.complete()

    async def cancel(self, context, event_queue):
        raise Exception("cancel not supported")


class Reject(AgentExecutor):
    async def execute(self, context, event_queue):
        updater = await start(context, event_queue)
        await updater.reject(updater.new_agent_message(
            [new_text_part("I can only convert currencies.")]))

    async def cancel(self, context, event_queue):
        raise NotImplementedError


class Samples(AgentExecutor):
    """Each message to the executor its first word names (a wrapping executor)."""

    def __init__(self):
        self.by_word = {"hello": HelloWorld(), "ask": Ask(), "chat": Chat(), "count": Count(),
                        "whoami": WhoAmI(), "slow": Slow(), "boom": Boom(),
                        "refuse": Refuse(), "early": Early(), "raw": Raw(),
                        "submitted": Submitted(), "stubborn": Stubborn(), "reject": Reject()}
        self.by_task = {}

    def _pick(self, context):
        if context.current_task is not None and context.task_id in self.by_task:
            return self.by_task[context.task_id]
        word = get_message_text(context.message).split(" ")[0]
        chosen = self.by_task[context.task_id] = self.by_word.get(word, self.by_word["hello"])
        return chosen

    async def execute(self, context, event_queue):
        await self._pick(context).execute(context, event_queue)

    async def cancel(self, context, event_queue):
        # Under `serve --workers` the cancel may reach a process that never ran the
        # task: the executor is then found from the task's first message, as an
        # executor kept in no process's memory would find it.
        chosen = self.by_task.get(context.task_id)
        if chosen is None and context.current_task is not None and context.current_task.history:
            word = get_message_text(context.current_task.history[0]).split(" ")[0]
            chosen = self.by_word.get(word)
        await (chosen or self.by_word["hello"]).cancel(context, event_queue)


class Timestamped(AgentExecutor):
    """The timestamp extension sample's shape: a wrapping executor whose own
    EventQueue subclass (only enqueue_event) stamps each status message."""

    URI = "https://example.com/ext/timestamp/v1"

    def __init__(self):
        self.inner = HelloWorld()

    async def execute(self, context, event_queue):
        wanted = self.URI in context.requested_extensions

        class Stamping(EventQueue):
            async def enqueue_event(self, event):
                if wanted and hasattr(event, "status") and event.status.HasField("message"):
                    event.status.message.metadata["timestamp"] = "2026-01-01T00:00:00Z"
                await event_queue.enqueue_event(event)

        await self.inner.execute(context, Stamping())

    async def cancel(self, context, event_queue):
        await self.inner.cancel(context, event_queue)


public_agent_card = AgentCard(
    name="SDK samples", description="Executors in the official samples' style",
    version="0.0.1", default_input_modes=["text/plain"], default_output_modes=["text/plain"],
    capabilities=AgentCapabilities(streaming=True),
    skills=[AgentSkill(id="samples", name="Samples", description="hello, ask, chat, count",
                       tags=["sample"], examples=["hello", "ask"])])

__all__ = ["Message", "Role", "Samples", "Timestamped", "public_agent_card"]


class BenchEcho(AgentExecutor):
    """The helloworld pattern answering as the benchmarks' load checks it:
    `echo: TEXT` as the artifact; `stream N`: N appended chunks."""

    async def execute(self, context, event_queue):
        updater = await start(context, event_queue)
        await updater.start_work()
        text = get_message_text(context.message)
        words = text.split()
        if len(words) == 2 and words[0] == "stream" and words[1].isdigit():
            n = int(words[1])
            for i in range(1, n + 1):
                await updater.add_artifact([new_text_part(f"chunk {i}/{n}")], artifact_id="c",
                                           name="chunks", append=i > 1, last_chunk=i == n)
        else:
            await updater.add_artifact([new_text_part(f"echo: {text}")], name="echo")
        await updater.complete()

    async def cancel(self, context, event_queue):
        raise NotImplementedError
