"""The extensions a send activated, named again to its retries.

A retried send (the same messageId, spec §3.3.1) starts no second run, so its
agent cannot activate anything for it; yet its answer is the first send's, and
so are the extensions that shaped it. The first send keeps what its agent
activated beside the task's conversation (the store's context state, named by
the messageId), on every store, so a retry reaching another worker, another
replica or a restarted server names them too; a retry that finds the run
still going reads them from the run. A retry is told only those it asks for
(`A2A-Extensions`), as any call is. The resumable-streams extension is
decided per call (parameters.announces) and is not kept.
"""

from __future__ import annotations

from a2a_grpc.core.call import CallContext
from a2a_grpc.core.stream import RESUMABLE_STREAMS_URI
from a2a_grpc.execution.run import Run
from a2a_grpc.stores import Scope, TaskStore

_NAME = "a2a-grpc/activated/"


class Activations:
    def __init__(self, store: TaskStore) -> None:
        self._store = store

    async def keep(self, scope: Scope, context_id: str, message_id: str,
                   ctx: CallContext) -> None:
        """After a first send: what its agent activated (most activate nothing:
        then nothing is written)."""
        activated = ctx.activated - {RESUMABLE_STREAMS_URI}
        if activated and message_id:
            await self._store.save_context_state(scope, context_id, _NAME + message_id,
                                                 "\n".join(sorted(activated)).encode())

    async def recall(self, scope: Scope, context_id: str, message_id: str, ctx: CallContext,
                     run: Run | None = None) -> None:
        """For a retry: the first send's activated extensions that it asks for."""
        if not ctx.extensions:
            return
        if run is not None and run.context is not None:
            ctx.activated.update(run.context.call.activated & ctx.extensions)
            return
        kept = await self._store.context_state(scope, context_id, _NAME + message_id)
        if kept:
            ctx.activated.update(set(kept.decode().split("\n")) & ctx.extensions)
