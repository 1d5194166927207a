"""The task store contract. Implementations: memory, SQLite, PostgreSQL.

A store keeps each task as one serialized proto plus what ListTasks filters
and sorts on, under a `Scope` (tenant, owner): a task outside the caller's
scope is indistinguishable from a missing one (spec §13.1: never reveal the
existence of what a caller may not see). Beside each task it keeps the
task's event log: every event, in order, under its sequence number, so a
client that lost its stream can replay what it missed. A read gives the
task as of its last event: the fold of the log up to there (a store may keep
a snapshot of the task now and then, and fold the events after it on read).

`append` takes what it needs from its arguments before it returns and hands
back an awaitable that completes once the write is committed: a caller may
make several appends before awaiting the first (a burst of events goes to
the store as one transaction), and the appends of one task are committed in
the order they were made. Nothing may be shown to anyone before its append
has completed. `append_many` is the same for several events of one task in
a row, all or none: the runtime hands a run's burst (the events an agent
emits without awaiting anything else) to the store in one call.

Fencing: an append extends the log only where its writer left it. It is
refused, with nothing of it written (its awaitable raises `TaskFencedError`),
when the task's log already ends in a final event (a final task is
immutable), when the task was taken over since the writer read it (a claim,
`unsettled`, moves the task's `epoch` on, and the writer's is older), or when
the log does not end at `seq - 1` (another server appended meanwhile). A
refused writer has lost the task: it stops, and reads the task again if it
has anything more to do with it.

Failures of the store itself (disk full, database unreachable, lock
timeout) raise `StoreUnavailableError`: the caller sees a clear, retryable
error and the write is not reported as done.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Generator, Sequence
from typing import Any, NamedTuple, Protocol

from a2a_grpc.core.listing import TaskQuery
from a2a_grpc.generated.a2a_pb2 import StreamResponse, Task, TaskPushNotificationConfig


class _Committed:
    """An append that was committed before `append` returned (the memory store's):
    awaiting it costs nothing, and a caller can test for it with `is COMMITTED`."""

    __slots__ = ()

    def __await__(self) -> Generator[Any, None, None]:
        return
        yield  # a generator that ends at once: `await COMMITTED` returns None


COMMITTED: Awaitable[None] = _Committed()


class Scope(NamedTuple):
    tenant: str
    owner: str


class StoredTask(NamedTuple):
    task: Task  # a fresh copy: the caller may change it freely
    seq: int
    epoch: int = 0  # moved on by each takeover (`unsettled` with a claim): the fence


class Claim(NamedTuple):
    """A replica taking over tasks whose lease expired (see `unsettled`)."""

    holder: str  # the replica's id
    now_ns: int  # leases that ended before this are expired
    until_ns: int  # the claimed tasks are held until then


class Delivery(NamedTuple):
    """One notification waiting in the outbox: event `seq` of a task, for one config."""

    id: int
    scope: Scope
    task_id: str
    config_id: str
    seq: int
    attempts: int
    last_error: str


class Appended(Protocol):
    """One event of an `append_many` (the runtime's journal entries are these)."""

    @property
    def seq(self) -> int: ...

    @property
    def event(self) -> StreamResponse: ...

    @property
    def message_id(self) -> str | None:
        """The user messageId this event records, if any."""

    @property
    def derived(self) -> bool:
        """Applied to the stored task by `lifecycle.apply` (see `append`)."""


class AppendedEvent(NamedTuple):
    """An `Appended` of its own (`append` makes one)."""

    seq: int
    event: StreamResponse
    message_id: str | None
    derived: bool


class TaskLog(Protocol):
    """Tasks and their event logs: what every store offers (the role the
    handler and the runtime need)."""

    def append(
        self, scope: Scope, task: Task, seq: int, event: StreamResponse,
        message_id: str | None = None, notify: bool = False, derived: bool = False,
        epoch: int = 0,
    ) -> Awaitable[None]:
        """Atomically: `task` as of event `seq`, `event` added to its log, (when
        `event` records a user message) that message's id, and (`notify`) one
        outbox entry per push config of the task. The awaitable completes when
        that is committed (COMMITTED: at once) or raises StoreUnavailableError;
        TaskFencedError when the fence refuses it (`epoch`: the task's epoch
        when the writer read it; see the module's doc). A store may also raise
        TaskFencedError from the call itself.

        `derived`: `task` is the task this store holds, with `event` applied by
        `lifecycle.apply` (the runtime's status and artifact events). A store may
        then keep the event alone and fold it into the task when the task is
        read. `task` and `event` are only read during the call: the caller
        keeps changing them."""

    def append_many(
        self, scope: Scope, task: Task, events: Sequence[Appended], notify: bool = False,
        epoch: int = 0,
    ) -> Awaitable[None]:
        """`append` for events of one task with consecutive sequence numbers, in
        one write: all of them or none. `task` is the task as of the last
        one; at most one of the events records a user message. The fence
        checks the first (the others follow it); with `notify`, each event gets
        its outbox entries."""

    def new_task_id(self) -> str:
        """An id for a task (or a context) this server starts: a sorted UUID
        (core/ids.py), which a sharded store makes name its shard (shards.py)."""

    async def get(self, scope: Scope, task_id: str) -> StoredTask | None:
        """The task, or None when it does not exist in `scope`."""

    async def events(
        self, scope: Scope, task_id: str, after: int, upto: int
    ) -> list[tuple[int, StreamResponse]]:
        """The task's logged events with after < seq <= upto, in order."""

    async def list_tasks(self, query: TaskQuery) -> tuple[list[Task], int]:
        """One page of matching tasks, newest status first, and the total count."""

    async def task_id_taken(self, tenant: str, task_id: str) -> bool:
        """Does any owner in `tenant` have a task with this id? (A client-chosen
        id, as the first draft allowed, must not collide with another's.)"""

    async def task_for_message(self, scope: Scope, message_id: str,
                               claim: bool = False) -> str | None:
        """The task that recorded this user messageId, if any (idempotent sends).
        `claim`: when none has, the caller starts a task for it; a store whose
        check and record are not one transaction (shards.py) holds the message
        id for the caller until that task's first write, so that two servers
        given it at once do not each start one."""

    async def set_handed_off(self, scope: Scope, task_id: str, handed_off: bool) -> None:
        """Mark a task its agent handed off on purpose (True), or that a run holds
        again (False). `unsettled` leaves marked tasks out."""

    async def handed_off(self, scope: Scope, task_id: str) -> bool:
        """Is the task marked handed off (`set_handed_off`)? False for an unknown one."""

    async def context_state(self, scope: Scope, context_id: str, name: str) -> bytes | None:
        """What an agent saved as `name` for this conversation, if anything."""

    async def save_context_state(self, scope: Scope, context_id: str, name: str,
                                 body: bytes) -> None:
        """Keep `body` as `name` for this conversation (replacing what was there)."""

    async def count_states(self) -> dict[int, int]:
        """How many tasks are in each state (TaskState number -> count), all
        tenants and owners (metrics)."""

    def take_queued(self) -> bool:
        """Did a commit queue push deliveries since the last call? The push
        sender is woken only then (else it looks at its idle poll)."""

    async def purge(self, before_ns: int) -> int:
        """Delete final tasks whose status is older than `before_ns`; how many."""

    async def card_published(self, name: str, digest: str, now_ns: int) -> int:
        """Since when the card `name` has had this `digest` (`now_ns` when it just
        changed): its Last-Modified, which replicas sharing the store agree on."""


class LeaseStore(Protocol):
    """Replicas sharing the store: who runs which task, until when, and taking
    over the tasks of a replica that stopped (crash recovery, alone too)."""

    def hold(self, holder: str, seconds: float) -> None:
        """Record `holder` as the runner of each task written from now on, for
        `seconds` from each write (replicas; a no-op for the memory store)."""

    async def renew(self, holder: str, until_ns: int,
                    running: Collection[str] | None = None) -> None:
        """Extend to `until_ns` the lease of every SUBMITTED or WORKING task
        `holder` holds; of those among `running` (task ids) alone, when given:
        a task the holder no longer runs (its writes refused, its run gone)
        then runs out of lease like a stopped replica's, and is taken over."""

    async def unsettled(self, claim: Claim | None = None) -> list[tuple[Scope, StoredTask]]:
        """Tasks left SUBMITTED or WORKING by a run (crash recovery), not those
        handed off. With `claim` (replicas sharing the store): only those whose
        lease ended before claim.now_ns and that another holder held, each now
        held by claim.holder until claim.until_ns, its epoch moved on (so the
        writer that held it is fenced off); a replica claiming at the same
        time gets none of them.

        A write holds its task for the writer (`lease`: holder, ns) from then;
        `renew` extends what a live replica holds."""


class PushStore(Protocol):
    """Push notification configs, and the outbox of their deliveries (queued
    by `TaskLog.append` with `notify`)."""

    async def save_push_config(self, scope: Scope, config: TaskPushNotificationConfig,
                               payload: str = "") -> None:
        """Insert or replace a config, keyed by (task_id, id). `payload` is what
        its notifications carry: "" the event (1.0), "1.1" the event with the
        A2A 1.1 draft's generations, or the dialect ("0.3", "0.1") whose
        task shape they are sent in."""

    async def get_push_config(
        self, scope: Scope, task_id: str, config_id: str
    ) -> TaskPushNotificationConfig | None: ...

    async def get_push_target(
        self, scope: Scope, task_id: str, config_id: str
    ) -> tuple[TaskPushNotificationConfig, str] | None:
        """A config with its `payload`, as saved."""

    async def list_push_configs(
        self, scope: Scope, task_id: str
    ) -> list[TaskPushNotificationConfig]:
        """All configs of a task, in creation order."""

    async def delete_push_config(self, scope: Scope, task_id: str, config_id: str) -> None:
        """Remove a config and its pending deliveries; a missing one is not an error."""

    async def due_deliveries(self, now_ns: int, limit: int,
                             claim_until_ns: int | None = None) -> list[Delivery]:
        """Pending deliveries due by `now_ns`: only the oldest pending one of each
        config, so a config's notifications go out in order. With
        `claim_until_ns` (replicas sharing the store): those returned are
        claimed, not due again until then, so no other replica sends them
        meanwhile; if the claimant dies, they are due again after that."""

    async def next_due(self) -> int | None:
        """When the earliest pending delivery is due (ns), if any."""

    async def delivered(self, delivery_id: int) -> None: ...

    async def reschedule(self, delivery_id: int, attempts: int, next_ns: int, error: str) -> None:
        ...

    async def dead_letter(self, delivery_id: int, attempts: int, error: str) -> None:
        """Give up on a delivery; it stays listed in `dead_letters`."""

    async def dead_letters(self, limit: int = 100) -> list[Delivery]: ...


class TaskStore(TaskLog, LeaseStore, PushStore, Protocol):
    """A whole store: every role, and its own life (open, close, ping)."""

    async def open(self) -> None:
        """Connect, and create or migrate the schema."""

    async def close(self) -> None: ...

    # Told how long each transaction took: (op, seconds), op being "commit" (a
    # group of appends), "read" or "write". Durable stores only; None: not told.
    timings: Callable[[str, float], None] | None

    async def register_server(self, alone: bool) -> None:
        """Count this process among the servers of the store, until `close`:
        `alone` (a server without a bus) as the only one, else as one of its
        replicas (each on the bus). Raises StoreInUseError when a server
        already on the store cannot share it with this one."""

    async def ping(self) -> bool:
        """Does the store answer a query? (Readiness; raising means no.)"""
