"""An agent that hands its tasks to a job queue and finishes them from there.

`make run ARGS="--agent examples.background_jobs:BackgroundJobs"`

`execute()` accepts the work (WORKING), puts a job on a queue and hands the
task off: the caller gets the WORKING task at once, and a streaming caller's
stream ends there. A worker, outside any run, takes jobs from the queue and
finishes each task through `self.tasks.task_events(...)`: its subscribers
see the result and its push webhooks get it, as from any run. A restart does
not fail a handed-off task; in a real deployment the queue would be durable
(a database table, a broker) and the worker would pick the job up again.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from a2a_grpc import AgentExecutor, RequestContext, TaskEvents
from a2a_grpc.types import AgentCapabilities, AgentCard, AgentSkill


@dataclass(frozen=True)
class Job:
    task_id: str  # with tenant and owner: where the task lives
    tenant: str
    owner: str
    text: str


class BackgroundJobs(AgentExecutor):
    card = AgentCard(
        name="Background jobs",
        description="Queues your text as a job and answers when the job is done.",
        version="1.0.0",
        capabilities=AgentCapabilities(streaming=True, push_notifications=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="shout", name="Shout later", description="Upper-cases text.",
                           tags=["jobs"], examples=["hello"])],
    )

    def __init__(self, delay_s: float = 0.5) -> None:
        self.delay_s = delay_s
        self.jobs: asyncio.Queue[Job] = asyncio.Queue()
        self._worker: asyncio.Task[None] | None = None

    async def execute(self, context: RequestContext, events: TaskEvents) -> None:
        if self._worker is None:  # started on first use, on the server's event loop
            self._worker = asyncio.create_task(self._work())
        await events.working("queued")
        await self.jobs.put(Job(events.task_id, events.tenant, events.owner, context.text))
        await events.hand_off()  # the run ends here; the task stays WORKING

    async def _work(self) -> None:
        while True:
            job = await self.jobs.get()
            await asyncio.sleep(self.delay_s)  # the slow part, elsewhere
            assert self.tasks is not None  # set by the server that runs this agent
            events = await self.tasks.task_events(job.task_id, tenant=job.tenant,
                                                  owner=job.owner)
            await events.artifact(job.text.upper(), name="result")
            await events.complete()
