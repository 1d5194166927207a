"""What a store raises: a store that cannot answer now (retryable for a
caller), an append the fence refused, a send whose message id another server
recorded first, a store another server holds, and one that cannot be opened (at start-up)."""

from __future__ import annotations

from a2a_grpc.core.errors import UnavailableError


class StoreUnavailableError(UnavailableError):
    default_message = "The task store is unavailable; try again shortly"


class MessageTakenError(StoreUnavailableError):
    """A new task's user messageId was recorded by another server first (replicas
    sharing a store, the same message sent to two at once): the send is a
    duplicate of that server's task."""

    default_message = "This messageId was recorded by another server first; try again"


class StoreInUseError(RuntimeError):
    """Another server is on the store, and this one cannot share it. A server
    without a bus takes itself for the only one: at start-up it ends the runs
    it finds unfinished (they can only be its last life's), and a cancel or a
    follow-up that reaches it never reaches a run elsewhere. So two servers on
    one store are replicas, each on the bus, or one is alone."""

    def __init__(self, where: str, alone: bool) -> None:
        if alone:
            why = (f"another a2a-grpc server is serving {where}: two servers on one store "
                   "must be replicas, each with --bus (A2A_GRPC_BUS), or `serve --workers N` "
                   "on one machine; or stop the other one first")
        else:
            why = (f"an a2a-grpc server without --bus (alone, or `serve --workers` on its "
                   f"own hub) is serving {where}: replicas need every server on the store on "
                   "one bus; stop it, or start it again with --bus, first")
        super().__init__(why)


class StoreOpenError(RuntimeError):
    """The store named by --store could not be opened or migrated (a folder that
    is not there, a file that is not a database, a server that refused): said
    with what to check, which other start-up failures are not."""

    def __init__(self, url: str, error: BaseException) -> None:
        said = str(error)  # a store's own words may name it already
        if not said.startswith("cannot open"):
            said = f"cannot open the store {url}: {said}"
        super().__init__(f"{said}; check --store")


class TaskFencedError(StoreUnavailableError):
    """An append refused by the fence (see the module's doc): the writer's view of
    the task is stale. `taken` is True when another replica claimed the task
    (this one's lease ended). Retryable for a caller: a new attempt reads the
    task as it now stands."""

    default_message = "This task was changed by another server meanwhile; try again"

    def __init__(self, task_id: str, why: str, *, taken: bool = False) -> None:
        super().__init__(f"task {task_id}: {why}")
        self.task_id, self.why, self.taken = task_id, why, taken
