"""Executors written for the official a2a-sdk 0.3, in the style most agents in
the wild still have (a2a-samples' 0.3 executors, Strands, ADK's released
executor): pydantic types, `final` flags, status events before any Task.
Served by the SDK's own 0.3 server (sdk03_server.py, A2A_SDK_EXECUTOR) and
by ours (`a2a-grpc serve --agent sdk03_agents:Samples`), driven alike by
sdk03_agent_client.py.

`Samples` picks by the first word: hello (new_task, TaskUpdater, final
flags), submit (TaskUpdater.submit() with no Task first, as
number_guessing_game and many samples do), ask (requires_input with
final=True, then a follow-up), chat (a Message answer, turns per context),
count N (appended chunks), whoami (the RequestContext, an activated
extension), slow (until canceled), refuse (ServerError(InvalidParamsError)),
done (one completed Task with its artifact, as CrewAI's samples answer),
raw (hand-built events: artifacts before any Task, a final status, an event
after it).
"""

import asyncio

from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.tasks import TaskUpdater
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentSkill,
    Artifact,
    InvalidParamsError,
    Part,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)
from a2a.utils import completed_task, new_agent_text_message, new_task, new_text_artifact
from a2a.utils.errors import ServerError

EXTENSION = "https://example.com/ext/echo-context/v1"


def text(words):
    return [Part(root=TextPart(text=words))]


async def start(context, queue):
    task = context.current_task
    if not task:
        task = new_task(context.message)
        await queue.enqueue_event(task)
    return TaskUpdater(queue, task.id, task.context_id)


class HelloWorld(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = await start(context, event_queue)
        await updater.update_status(TaskState.working, new_agent_text_message(
            "Processing request...", context.context_id, context.task_id))
        await updater.add_artifact(text(f"Hello, World! ({context.get_user_input()})"),
                                   name="greeting")
        await updater.complete()

    async def cancel(self, context, event_queue):
        raise ServerError(error=InvalidParamsError(message="cancel is not supported"))


class Submit(AgentExecutor):
    async def execute(self, context, event_queue):
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.submit()
        await updater.start_work()
        await updater.add_artifact(text("submitted first"))
        await updater.complete()

    async def cancel(self, context, event_queue):
        raise NotImplementedError


class Ask(AgentExecutor):
    async def execute(self, context, event_queue):
        first = context.current_task is None
        updater = await start(context, event_queue)
        if first:
            await updater.requires_input(new_agent_text_message(
                "What is your name?", context.context_id, context.task_id), final=True)
            return
        await updater.add_artifact(text(
            f"Hello {context.get_user_input()} (history {len(context.current_task.history)})"))
        await updater.complete()

    async def cancel(self, context, event_queue):
        raise NotImplementedError


class Chat(AgentExecutor):
    def __init__(self):
        self.turns = {}

    async def execute(self, context, event_queue):
        n = self.turns[context.context_id] = self.turns.get(context.context_id, 0) + 1
        await event_queue.enqueue_event(new_agent_text_message(
            f"turn {n}: {context.get_user_input()}", context.context_id))

    async def cancel(self, context, event_queue):
        raise NotImplementedError


class Count(AgentExecutor):
    async def execute(self, context, event_queue):
        updater = await start(context, event_queue)
        n = int(context.get_user_input().split()[1])
        for i in range(1, n + 1):
            await updater.add_artifact(text(f"{i}"), artifact_id="count", name="count",
                                       append=i > 1, last_chunk=i == n)
        await updater.complete()

    async def cancel(self, context, event_queue):
        raise NotImplementedError


class WhoAmI(AgentExecutor):
    async def execute(self, context, event_queue):
        updater = await start(context, event_queue)
        if EXTENSION in context.requested_extensions:
            context.add_activated_extension(EXTENSION)
        user = context.call_context.user
        said = (f"user={user.user_name or '-'} auth={user.is_authenticated} "
                f"extensions={','.join(sorted(context.requested_extensions)) or '-'} "
                f"metadata={','.join(sorted(context.metadata)) or '-'} "
                f"input={context.get_user_input()}")
        await updater.add_artifact(text(said), name="whoami")
        await updater.complete()

    async def cancel(self, context, event_queue):
        raise NotImplementedError


class Slow(AgentExecutor):
    async def execute(self, context, event_queue):
        updater = await start(context, event_queue)
        await updater.start_work()
        await asyncio.sleep(60)
        await updater.complete()

    async def cancel(self, context, event_queue):
        task = context.current_task
        await TaskUpdater(event_queue, task.id, task.context_id).cancel()


class Refuse(AgentExecutor):
    async def execute(self, context, event_queue):
        raise ServerError(error=InvalidParamsError(message="say it differently"))

    async def cancel(self, context, event_queue):
        raise NotImplementedError


class Done(AgentExecutor):
    async def execute(self, context, event_queue):
        await event_queue.enqueue_event(completed_task(
            context.task_id, context.context_id,
            [new_text_artifact("result", "all done")], [context.message]))

    async def cancel(self, context, event_queue):
        raise NotImplementedError


class Raw(AgentExecutor):
    """Hand-built events, as travel_planner_agent and the LangGraph samples
    enqueue them: artifact events before any Task (a new artifact each
    chunk), then a completed status with final=True."""

    async def execute(self, context, event_queue):
        for i, word in enumerate(("raw", "events")):
            await event_queue.enqueue_event(TaskArtifactUpdateEvent(
                task_id=context.task_id, context_id=context.context_id, append=False,
                last_chunk=i == 1, artifact=Artifact(artifact_id=f"part-{i}", parts=text(word))))
        await event_queue.enqueue_event(TaskStatusUpdateEvent(
            task_id=context.task_id, context_id=context.context_id, final=True,
            status=TaskStatus(state=TaskState.completed,
                              message=new_agent_text_message("raw done"))))
        await event_queue.enqueue_event(TaskStatusUpdateEvent(  # after final: dropped
            task_id=context.task_id, context_id=context.context_id, final=False,
            status=TaskStatus(state=TaskState.working)))

    async def cancel(self, context, event_queue):
        raise NotImplementedError


class Samples(AgentExecutor):
    def __init__(self):
        self.by_word = {"hello": HelloWorld(), "submit": Submit(), "ask": Ask(), "chat": Chat(),
                        "count": Count(), "whoami": WhoAmI(), "slow": Slow(),
                        "refuse": Refuse(), "done": Done(), "raw": Raw()}
        self.by_task = {}

    async def execute(self, context, event_queue):
        chosen = self.by_task.get(context.task_id) if context.current_task else None
        if chosen is None:
            word = context.get_user_input().split(" ")[0]
            chosen = self.by_task[context.task_id] = self.by_word.get(word,
                                                                      self.by_word["hello"])
        await chosen.execute(context, event_queue)

    async def cancel(self, context, event_queue):
        await self.by_task.get(context.task_id, self.by_word["hello"]).cancel(
            context, event_queue)


agent_card = AgentCard(
    name="SDK 0.3 samples", description="Executors in the 0.3 samples' style", version="0.3",
    url="http://localhost:9999/", default_input_modes=["text"], default_output_modes=["text"],
    capabilities=AgentCapabilities(streaming=True),
    skills=[AgentSkill(id="samples", name="Samples", description="hello, ask, chat",
                       tags=["sample"])])
