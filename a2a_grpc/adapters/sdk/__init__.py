"""Serve an executor written for the official A2A SDK (`a2a-sdk`, 1.x or
0.3.x) as it is: `SdkAgent(executor)`, or `a2a-grpc serve --agent
module:MyExecutor`, which recognises one without this wrapper.

    from a2a_grpc.adapters.sdk import SdkAgent
    served = SdkAgent(HelloWorldAgentExecutor(), card=public_agent_card)

The executor is handed what the SDK's own server hands it: a RequestContext
of its generation (the message, the task and context ids, the current task
with its history, related tasks, the configuration, the request metadata, a
ServerCallContext whose user is the caller our authentication admitted,
the requested extensions, the tenant on 1.x, the headers in
`state["headers"]`), and an EventQueue of its generation's class whose
events are applied as that generation's handler applies them (events.py).
Every binding, dialect, store, stream, push and limit of the server applies.
Docs: docs/official-sdk-agents.md.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence
from typing import Any

from a2a_grpc.adapters.sdk.events import Applier, queue_for
from a2a_grpc.adapters.sdk.generations import Generation, current, error_in
from a2a_grpc.agent import AgentExecutor, RequestContext, TaskEvents
from a2a_grpc.cards.card import minimal_card
from a2a_grpc.core.errors import TaskNotCancelableError
from a2a_grpc.core.extras import missing
from a2a_grpc.generated.a2a_pb2 import AgentCard, Task

try:
    import a2a.server.agent_execution  # noqa: F401  # the SDK's executors need it anyway
except ImportError as exc:  # pragma: no cover - the extra names what to install
    raise missing(exc, "serving an a2a-sdk AgentExecutor", "sdk") from exc

log = logging.getLogger("a2a_grpc.adapters.sdk")
# Where a module keeps its card when it builds one (the samples' names first).
CARD_NAMES = ("public_agent_card", "agent_card", "card", "AGENT_CARD")


class SdkAgent(AgentExecutor):
    """An a2a-sdk AgentExecutor (either generation) as an agent of ours.

    `card`: the agent's card: the SDK's AgentCard, ours, or None to find one
    where users put it: at the top level of a module of `modules` (the
    `--agent` module), then of the executor's class's module, then
    `published` (the card a framework's server publishes); else a minimal
    card named after the executor. The server fills in its own interfaces."""

    # An SDK executor's execute() may return with the task still working (the
    # work goes on, or ends in the background): the task stays as it is.
    hand_off_on_return = True

    def __init__(self, executor: Any, card: Any = None, *, modules: Sequence[str] = (),
                 published: Any = None) -> None:
        self.executor = executor
        self.generation: Generation = current()
        card_class = self.generation.types.AgentCard
        own = card
        for module in (*modules, type(executor).__module__):
            if own is None:
                own = module_card(module, card_class)
        own = own if own is not None else published
        if own is not None:
            self.card = own if isinstance(own, AgentCard) else self.generation.card_in(own)
        else:  # named after the executor, not this wrapper
            self.card = minimal_card(executor)

    async def execute(self, context: RequestContext, events: TaskEvents) -> None:
        generation, call = self.generation, context.call
        sdk_call = generation.call_context(context, user=call.user, tenant=call.tenant,
                                           headers=dict(call.metadata))
        applier = Applier(generation, events, context, context.task, sdk_call)
        try:
            await self.executor.execute(generation.request_context(context, context.task,
                                                                   sdk_call),
                                        queue_for(generation, applier))
        except Exception as exc:
            mapped = error_in(exc)  # the SDK's A2A error as ours: the call fails with it
            if mapped is None:
                raise
            raise mapped from exc
        finally:
            applier.activate()

    async def cancel(self, task: Task, events: TaskEvents) -> None:
        """The executor's cancel() with the task as it stands and a queue; the
        server then stops the run and ends the task CANCELED, whatever cancel()
        did. Unless it raised: an A2A error is the caller's answer, any other
        exception is TaskNotCancelableError (A2A's answer for a task that cannot
        be canceled, where the SDK's server answers an internal error), and in
        both the run goes on, the task as it was. NotImplementedError (the
        helloworld sample's) stops the run all the same."""
        generation = self.generation
        sdk_call = generation.call_context(None, user=events.owner, tenant=events.tenant,
                                           headers={})
        applier = Applier(generation, events, None, task, sdk_call)
        try:
            await self.executor.cancel(generation.cancel_context(task, sdk_call),
                                       queue_for(generation, applier))
        except NotImplementedError:
            log.info("task %s: the executor does not implement cancel(); its run is stopped",
                     task.id)
        except Exception as exc:
            mapped = error_in(exc)
            if mapped is None:
                log.info("task %s: the executor's cancel() raised %s: %s; its run goes on",
                         task.id, type(exc).__name__, exc)
                raise TaskNotCancelableError(
                    f"the agent cannot cancel task {task.id}: {exc or type(exc).__name__}",
                ) from exc
            raise mapped from exc


def module_card(name: str, card_class: type) -> Any:
    """The SDK AgentCard the module `name` defines at its top level, if any
    (by one of CARD_NAMES, or the only one)."""
    module = sys.modules.get(name)
    if module is None:
        return None
    found = {name: value for name, value in vars(module).items()
             if isinstance(value, card_class)}
    for name in CARD_NAMES:
        if name in found:
            return found[name]
    return next(iter(found.values())) if len(found) == 1 else None


__all__ = ["SdkAgent"]
