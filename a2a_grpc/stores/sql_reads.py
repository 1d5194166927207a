"""The reads of the SQL stores: a task (its snapshot with the events logged
after it folded in), its log, a page of tasks and their count, the tasks
left running. `SqlReads` is held by the store, which gives it how
statements run (as `SqlPush` is).

Every ListTasks filter combination has an index ending in (status time, id),
so a page is an index range scan that costs the same at 100,000 tasks as at
1,000; total counts come from the per-(tenant, owner, state) counter kept in
the task's transaction, so the common "how many tasks (in this state)?" does
not scan either; other filters count over their index.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from a2a_grpc.core import lifecycle, states
from a2a_grpc.core.listing import TaskQuery
from a2a_grpc.generated.a2a_pb2 import StreamResponse, Task
from a2a_grpc.stores.base import Scope, StoredTask
from a2a_grpc.stores.sql_batch import Row, frames
from a2a_grpc.stores.writes import TERMINAL

Read = Callable[..., Awaitable[list[Row]]]  # (doing, sql, *args)

# The owner is compared by the caller, not here: given (tenant, id, owner),
# PostgreSQL planned a young table's lookup as a scan of all the owner's entries
# in a2a_tasks_state (index-only, cheap while its statistics said the table was
# empty), which grows with the table (docs/benchmarks.md); by the key it does not.
GET_TASK = ("SELECT t.id, t.state, s.seq, s.body, t.epoch, t.owner FROM a2a_tasks t "
            "JOIN a2a_snapshots s ON s.tenant = t.tenant AND s.task_id = t.id "
            "WHERE t.tenant = ? AND t.id = ?")
RUNNING = (int(states.SUBMITTED), int(states.WORKING))
# A task another replica ran whose lease ended: args *RUNNING, now_ns, the claimant.
EXPIRED = "state IN (?, ?) AND handed_off = 0 AND lease_ns < ? AND holder <> ?"


class SqlReads:
    def __init__(self, read: Read) -> None:
        self._query = read

    async def task_id_taken(self, tenant: str, task_id: str) -> bool:
        rows = await self._query(f"looking up task {task_id}",
                                 "SELECT 1 FROM a2a_tasks WHERE tenant = ? AND id = ?",
                                 tenant, task_id)
        return bool(rows)

    async def task_for_message(self, scope: Scope, message_id: str,
                               claim: bool = False) -> str | None:
        rows = await self._query("reading message ids",
                                 "SELECT task_id FROM a2a_messages WHERE tenant = ? AND owner = ? "
                                 "AND message_id = ?", scope.tenant, scope.owner, message_id)
        return str(rows[0][0]) if rows else None

    async def handed_off(self, scope: Scope, task_id: str) -> bool:
        rows = await self._query("reading a task's hand-off mark",
                                 "SELECT handed_off FROM a2a_tasks WHERE tenant = ? AND id = ? "
                                 "AND owner = ?", scope.tenant, task_id, scope.owner)
        return bool(rows) and bool(rows[0][0])

    async def context_state(self, scope: Scope, context_id: str, name: str) -> bytes | None:
        rows = await self._query("reading a conversation's state",
                                 "SELECT body FROM a2a_contexts WHERE tenant = ? AND owner = ? "
                                 "AND context_id = ? AND name = ?", scope.tenant, scope.owner,
                                 context_id, name)
        return bytes(rows[0][0]) if rows else None

    async def get(self, scope: Scope, task_id: str) -> StoredTask | None:
        rows = await self._query(f"reading task {task_id}", GET_TASK, scope.tenant, task_id)
        rows = [r for r in rows if r[5] == scope.owner]
        return (await self.folded(scope.tenant, rows))[0] if rows else None

    async def folded(self, tenant: str, rows: Sequence[Row]) -> list[StoredTask]:
        """Rows of (id, state, snapshot seq, snapshot, epoch) as tasks: each live task's
        snapshot with the events logged after it folded in. (A final task's
        snapshot is current.) The events are read after the snapshot, so a
        write in between only adds events to fold."""
        found = [StoredTask(Task.FromString(bytes(r[3])), int(r[2]), int(r[4])) for r in rows]
        live = [(i, r) for i, r in enumerate(rows) if int(r[1]) not in TERMINAL]
        if not live:
            return found
        ors = " OR ".join(["(task_id = ? AND seq > ?)"] * len(live))
        later = await self._query(
            "reading task events",
            f"SELECT task_id, seq, n, body FROM a2a_events WHERE tenant = ? AND ({ors}) "
            "ORDER BY task_id, seq", tenant, *(v for _, r in live for v in (r[0], int(r[2]))))
        at = {r[0]: i for i, r in live}
        for task_id, last, n, body in later:
            i = at[task_id]
            for seq, event in frames(int(last), int(n), bytes(body)):
                if seq > found[i].seq:  # a row may begin before the snapshot
                    lifecycle.apply(found[i].task, StreamResponse.FromString(event))
                    found[i] = found[i]._replace(seq=seq)
        return found

    async def events(
        self, scope: Scope, task_id: str, after: int, upto: int
    ) -> list[tuple[int, StreamResponse]]:
        rows = await self._query(
            f"reading events of task {task_id}",
            "SELECT seq, n, body FROM a2a_events WHERE tenant = ? AND task_id = ? AND seq > ? "
            "AND seq - n < ? ORDER BY seq", scope.tenant, task_id, after, upto)
        return [(seq, StreamResponse.FromString(event)) for r in rows
                for seq, event in frames(int(r[0]), int(r[1]), bytes(r[2])) if after < seq <= upto]

    async def list_tasks(self, query: TaskQuery) -> tuple[list[Task], int]:
        where: list[str] = ["t.tenant = ?", "t.owner = ?"]
        args: list[Any] = [query.tenant, query.owner]
        if query.context_id:
            where.append("t.context_id = ?")
            args.append(query.context_id)
        if query.status:
            where.append("t.state = ?")
            args.append(int(query.status))
        if query.after_ns is not None:
            where.append("t.status_ns >= ?")
            args.append(query.after_ns)
        page_where, page_args = list(where), list(args)
        if query.cursor is not None:  # strictly after the cursor, newest first
            # A row-value comparison, so both databases turn it into an index range.
            page_where.append("(t.status_ns, t.id) < (?, ?)")
            page_args += [query.cursor[0], query.cursor[1]]
        rows = await self._query(
            "listing tasks",
            "SELECT t.id, t.state, s.seq, s.body, t.epoch FROM a2a_tasks t JOIN a2a_snapshots s "
            f"ON s.tenant = t.tenant AND s.task_id = t.id WHERE {' AND '.join(page_where)} "
            "ORDER BY t.status_ns DESC, t.id DESC LIMIT ?", *page_args, query.page_size)
        page = [found.task for found in await self.folded(query.tenant, rows)]
        return page, await self._total(query, where, args)

    async def _total(self, query: TaskQuery, where: list[str], args: list[Any]) -> int:
        if not query.context_id and query.after_ns is None:
            counted = ["tenant = ?", "owner = ?"] + (["state = ?"] if query.status else [])
            rows = await self._query("counting tasks",
                                     f"SELECT SUM(n) FROM a2a_counts WHERE {' AND '.join(counted)}",
                                     *args[: len(counted)])
        else:
            rows = await self._query(
                "counting tasks", f"SELECT COUNT(*) FROM a2a_tasks t WHERE {' AND '.join(where)}",
                *args)
        return int(rows[0][0] or 0) if rows else 0

    async def running(self) -> list[tuple[Scope, StoredTask]]:
        """Every SUBMITTED or WORKING task no run has handed off."""
        rows = await self._query(
            "finding running tasks",
            "SELECT t.tenant, t.owner, t.id, t.state, s.seq, s.body, t.epoch FROM a2a_tasks t "
            "JOIN a2a_snapshots s ON s.tenant = t.tenant AND s.task_id = t.id "
            "WHERE t.state IN (?, ?) AND t.handed_off = 0", *RUNNING)
        return [(Scope(r[0], r[1]), (await self.folded(r[0], [r[2:]]))[0]) for r in rows]
