"""The SQLite store in shards: `serve --workers N` writes N files, not one.

One SQLite file has one writer at a time, and a writer that follows another
process's write finds its page cache stale and reads the file's pages again:
N workers on one file served about 2x one process on sends
(docs/benchmarks.md, "Workers"). With shards, worker k creates its tasks in
a file of its own, shard k-1: PATH for shard 0 (the file a single process
uses, so today's store is shard 0 as it is), PATH.shard-K beside it for the
others. Each worker then writes its own file, on its own cache, and none
waits for another.

- **Finding a task.** A task id made here ends in two hex digits naming its
  shard (`new_task_id`). An id not ours (a client-chosen one, a digit
  naming no shard) is in shard 0. A task not found where its id points
  (shards added since it was made) is looked for in every shard, and
  remembered.
- **Any worker reads and writes any shard.** WAL readers never wait for the
  writer; a worker writes another's shard when it continues that task (a
  follow-up, a take-over), under that shard's write lock (sqlite_lock.py),
  as workers wrote one file before.
- **Across shards**: ListTasks merges the shards' pages (the cursor is a
  sort key, so a page from each suffices), counts add up, take-over and
  retention visit every shard, push deliveries carry their shard in their
  id, conversations' state follows their context id as tasks do (found in
  any shard), and a messageId is claimed across processes while it is
  looked up and recorded (shard_claims.py).
- **The files**: the supervisor of `serve --workers N` creates and migrates
  the N shards before its workers start; any later server opens every
  shard it finds. `a2a-grpc backup` copies each (backup.py).
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Awaitable, Collection, Sequence
from pathlib import Path
from typing import Any

from a2a_grpc.core.ids import sorted_id
from a2a_grpc.core.listing import TaskQuery, sort_key
from a2a_grpc.generated.a2a_pb2 import StreamResponse, Task, TaskPushNotificationConfig
from a2a_grpc.stores.base import Appended, Claim, Delivery, Scope, StoredTask
from a2a_grpc.stores.shard_claims import MessageClaims
from a2a_grpc.stores.shard_files import MAX_SHARDS, Placement, shard_path
from a2a_grpc.stores.sqlite import SqliteTaskStore


class ShardedSqliteStore:
    def __init__(self, path: str | Path, own: int, count: int) -> None:
        if not 0 < count <= MAX_SHARDS:
            raise ValueError(f"a SQLite store has 1 to {MAX_SHARDS} shards, not {count}")
        self.path = Path(path)
        self.own = own % count
        self.shards = [SqliteTaskStore(shard_path(self.path, k)) for k in range(count)]
        self._mine = self.shards[self.own]
        self._where = Placement(count)
        # The shards this process may hold leases in: its own, and those it wrote
        # or claimed tasks in (renewals go only there: a write takes a file's lock).
        self._holding = {self.own}
        self._holder = ""  # the lease holder this process writes as (`hold`)
        self.claims = MessageClaims(self.path)
        self.write_locks = [shard.write_lock for shard in self.shards]  # metrics

    # -- its life --

    async def open(self) -> None:
        for shard in self.shards:
            await shard.open()
        self.claims.open()

    async def close(self) -> None:
        try:
            for shard in self.shards:
                await shard.close()
        finally:
            self.claims.close()

    async def register_server(self, alone: bool) -> None:
        await self.shards[0].register_server(alone)

    async def ping(self) -> bool:
        return await self._mine.ping()

    @property
    def timings(self) -> Any:
        return self._mine.timings

    @timings.setter
    def timings(self, timer: Any) -> None:
        for shard in self.shards:
            shard.timings = timer

    @property
    def commits(self) -> tuple[int, int]:
        done = [shard.commits for shard in self.shards]
        return sum(t for t, _ in done), sum(w for _, w in done)

    # -- where a key lives --

    def new_task_id(self) -> str:
        return f"{sorted_id()[:-2]}{self.own:02x}"

    def _at(self, key: str) -> SqliteTaskStore:
        return self.shards[self._where(key)]

    def _writing(self, key: str) -> SqliteTaskStore:
        """The shard of `key`, for a task write (which leases the task to us)."""
        k = self._where(key)
        if k not in self._holding:
            self._holding.add(k)
        return self.shards[k]

    async def _find(self, key: str, found: Any) -> Any:
        """`found(shard)` in the shard `key` names, else in the first other one
        where it gives something (then remembered)."""
        first = self._at(key)
        if (hit := await found(first)) is not None or len(self.shards) == 1:
            return hit
        for k, shard in enumerate(self.shards):
            if shard is not first and (hit := await found(shard)) is not None:
                self._where.found(key, k)
                return hit
        return hit

    # -- tasks and their log --

    def append(self, scope: Scope, task: Task, seq: int, event: StreamResponse,
               message_id: str | None = None, notify: bool = False, derived: bool = False,
               epoch: int = 0) -> Awaitable[None]:
        done = self._writing(task.id).append(scope, task, seq, event, message_id, notify,
                                             derived, epoch)
        if message_id is not None:
            self._release_when(done, scope, message_id)
        return done

    def append_many(self, scope: Scope, task: Task, events: Sequence[Appended],
                    notify: bool = False, epoch: int = 0) -> Awaitable[None]:
        done = self._writing(task.id).append_many(scope, task, events, notify, epoch)
        for appended in events:
            if appended.message_id is not None:
                self._release_when(done, scope, appended.message_id)
        return done

    def _release_when(self, done: Awaitable[None], scope: Scope, message_id: str) -> None:
        """The message's claim lasts until the write recording it is committed
        (or refused)."""
        if self.claims.holds(scope, message_id):
            done.add_done_callback(  # type: ignore[attr-defined]  # GroupCommit's future
                lambda _: self.claims.release(scope, message_id))

    async def get(self, scope: Scope, task_id: str) -> StoredTask | None:
        return await self._find(task_id, lambda shard: shard.get(scope, task_id))  # type: ignore[no-any-return]

    async def events(self, scope: Scope, task_id: str, after: int, upto: int
                     ) -> list[tuple[int, StreamResponse]]:
        return await self._at(task_id).events(scope, task_id, after, upto)

    async def list_tasks(self, query: TaskQuery) -> tuple[list[Task], int]:
        pages = [await shard.list_tasks(query) for shard in self.shards]
        newest = heapq.merge(*(page for page, _ in pages), key=sort_key, reverse=True)
        return list(itertools.islice(newest, query.page_size)), sum(total for _, total in pages)

    async def task_id_taken(self, tenant: str, task_id: str) -> bool:
        for shard in self.shards:
            if await shard.task_id_taken(tenant, task_id):
                return True
        return False

    async def task_for_message(self, scope: Scope, message_id: str,
                               claim: bool = False) -> str | None:
        if claim:
            await self.claims.claim(scope, message_id)
        found = await self._mine.task_for_message(scope, message_id)
        for shard in self.shards:
            if found is not None:
                break
            if shard is not self._mine:
                found = await shard.message_task_on_loop(scope, message_id)
        if claim and found is not None:
            self.claims.release(scope, message_id)
        return found

    async def set_handed_off(self, scope: Scope, task_id: str, handed_off: bool) -> None:
        await self._writing(task_id).set_handed_off(scope, task_id, handed_off)

    async def handed_off(self, scope: Scope, task_id: str) -> bool:
        return await self._at(task_id).handed_off(scope, task_id)

    async def context_state(self, scope: Scope, context_id: str, name: str) -> bytes | None:
        return await self._find(  # type: ignore[no-any-return]
            context_id, lambda shard: shard.context_state(scope, context_id, name))

    async def save_context_state(self, scope: Scope, context_id: str, name: str,
                                 body: bytes) -> None:
        await self._at(context_id).save_context_state(scope, context_id, name, body)

    async def count_states(self) -> dict[int, int]:
        counts: dict[int, int] = {}
        for shard in self.shards:
            for state, n in (await shard.count_states()).items():
                counts[state] = counts.get(state, 0) + n
        return counts

    def take_queued(self) -> bool:
        return any([shard.take_queued() for shard in self.shards])  # each one's flag taken

    async def purge(self, before_ns: int) -> int:
        return sum([await shard.purge(before_ns) for shard in self.shards])

    async def card_published(self, name: str, digest: str, now_ns: int) -> int:
        return await self.shards[0].card_published(name, digest, now_ns)

    # -- leases --

    def hold(self, holder: str, seconds: float) -> None:
        self._holder = holder
        for shard in self.shards:
            shard.hold(holder, seconds)

    async def renew(self, holder: str, until_ns: int,
                    running: Collection[str] | None = None) -> None:
        """Our leases where we may hold some; another holder's (ended by a
        take-over) in every shard."""
        ours = holder == self._holder
        for k, shard in enumerate(self.shards):
            if k in self._holding or not ours:
                await shard.renew(holder, until_ns, running)

    async def unsettled(self, claim: Claim | None = None) -> list[tuple[Scope, StoredTask]]:
        found: list[tuple[Scope, StoredTask]] = []
        for k, shard in enumerate(self.shards):
            if claim is not None and not await shard.expired_leases(claim):
                continue  # asked with a read: the claim itself writes
            taken = await shard.unsettled(claim)
            if taken and claim is not None:
                self._holding.add(k)
            found += taken
        return found

    # -- push configs and deliveries: a delivery's id carries its shard --

    async def save_push_config(self, scope: Scope, config: TaskPushNotificationConfig,
                               payload: str = "") -> None:
        await self._at(config.task_id).save_push_config(scope, config, payload)

    async def get_push_config(self, scope: Scope, task_id: str, config_id: str
                              ) -> TaskPushNotificationConfig | None:
        return await self._at(task_id).get_push_config(scope, task_id, config_id)

    async def get_push_target(self, scope: Scope, task_id: str, config_id: str
                              ) -> tuple[TaskPushNotificationConfig, str] | None:
        return await self._at(task_id).get_push_target(scope, task_id, config_id)

    async def list_push_configs(self, scope: Scope, task_id: str
                                ) -> list[TaskPushNotificationConfig]:
        return await self._at(task_id).list_push_configs(scope, task_id)

    async def delete_push_config(self, scope: Scope, task_id: str, config_id: str) -> None:
        await self._at(task_id).delete_push_config(scope, task_id, config_id)

    def _deliveries(self, k: int, found: list[Delivery]) -> list[Delivery]:
        return [d._replace(id=d.id * MAX_SHARDS + k) for d in found]

    def _of(self, delivery_id: int) -> tuple[SqliteTaskStore, int]:
        return self.shards[delivery_id % MAX_SHARDS], delivery_id // MAX_SHARDS

    async def due_deliveries(self, now_ns: int, limit: int,
                             claim_until_ns: int | None = None) -> list[Delivery]:
        due: list[Delivery] = []
        for k, shard in enumerate(self.shards):
            if len(due) >= limit:
                break
            if claim_until_ns is not None and ((at := await shard.next_due()) is None
                                               or at > now_ns):
                continue  # asked with a read: the claim itself writes
            due += self._deliveries(k, await shard.due_deliveries(
                now_ns, limit - len(due), claim_until_ns))
        return due

    async def next_due(self) -> int | None:
        due = [at for shard in self.shards if (at := await shard.next_due()) is not None]
        return min(due, default=None)

    async def delivered(self, delivery_id: int) -> None:
        shard, row = self._of(delivery_id)
        await shard.delivered(row)

    async def reschedule(self, delivery_id: int, attempts: int, next_ns: int, error: str) -> None:
        shard, row = self._of(delivery_id)
        await shard.reschedule(row, attempts, next_ns, error)

    async def dead_letter(self, delivery_id: int, attempts: int, error: str) -> None:
        shard, row = self._of(delivery_id)
        await shard.dead_letter(row, attempts, error)

    async def dead_letters(self, limit: int = 100) -> list[Delivery]:
        found: list[Delivery] = []
        for k, shard in enumerate(self.shards):
            found += self._deliveries(k, await shard.dead_letters(limit))
        return found[:limit]
