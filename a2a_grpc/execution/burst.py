"""A run's burst: the events an agent emits without awaiting anything else,
applied to its task one by one (by the actor) and handed to the store as one
write (`TaskStore.append_many`): one fence check, one row of the log.

- The actor takes each event into the burst (`take`). The burst is written
  when the agent gives the loop back: before its sink yields (the actor's
  `release`), or, when it awaits something else, by the callback the loop
  runs next (`write_later`, scheduled as a burst begins); when something
  waits for an event (`through`: a final state, an answer); once it holds
  MAX_BURST events (`full`, checked after an event joins, so that undoing
  the write undoes that event too, in order); and before an event
  recording a user message joins a burst that records one already (a
  store's write records one message).
- The journal (journal.py) publishes a write once it is committed; a write
  the store commits at once (the memory store) is published by the writer
  holding the task's turn (`through`), in order.
- A write the store refuses at once is undone whole: the caller gets the
  error raised, the other runs of its events at their next event; from the
  callback, every run of the burst is stopped (it may be waiting for
  something else) and fails its task.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Protocol

from a2a_grpc.core.errors import UnavailableError
from a2a_grpc.execution.journal import Entry, Journal, Pending, tell_runs_of_loss
from a2a_grpc.generated.a2a_pb2 import Message
from a2a_grpc.stores import COMMITTED

if TYPE_CHECKING:
    from a2a_grpc.execution.run_state import RunState

log = logging.getLogger("a2a_grpc.runtime")

MAX_BURST = 256  # events in one write at most


class Owner(Protocol):
    """The task's actor, as its burst sees it while writing (held only then)."""

    def append(self, events: list[Entry]) -> Awaitable[None]:
        """The store's `append_many` of `events`, for the task as it stands."""

    async def publish(self, entries: list[Entry]) -> None:
        """Publish a committed write's events, in order."""

    def restore(self, lost: list[Entry], error: BaseException) -> None:
        """Put the task back to before `lost`, which were not stored."""

    def stop(self, runs: set[RunState]) -> None:
        """Stop these runs wherever they wait: their events could not be stored."""


class Burst:
    __slots__ = ("_journal", "_message", "entries")

    def __init__(self, journal: Journal) -> None:
        self._journal = journal
        self.entries: list[Entry] = []
        self._message = False  # one of them records a user message

    def take(self, entry: Entry) -> bool:
        """Add `entry`; True when it begins a burst (see `must_write` first)."""
        self.entries.append(entry)
        if entry.message is not None:
            self._message = True
        return len(self.entries) == 1

    def must_write(self, message: Message | None) -> bool:
        """Must the burst be written before an event recording `message` joins?
        (Such an event replaces the task whole: nothing of it is applied yet.)"""
        return message is not None and self._message

    def full(self) -> bool:
        """Is the burst to be written now, with the event just taken in it?"""
        return len(self.entries) >= MAX_BURST

    def drop(self) -> list[Entry]:
        """The burst, no longer to be written (what it was made on was lost)."""
        entries, self.entries, self._message = self.entries, [], False
        return entries

    def write(self, owner: Owner, run: RunState | None,
              inline: bool = False) -> list[Entry] | None:
        """Hand the burst to the store as one write. `inline`: if the store
        committed it at once and nothing is before it, the caller publishes
        it (this returns its events); else the journal does."""
        entries = self.drop()
        try:
            written = owner.append(entries)
        except BaseException as exc:
            owner.restore(entries, exc)
            tell_runs_of_loss(entries, exc, run)
            raise
        journal = self._journal
        if inline and written is COMMITTED and journal.idle:
            journal.committed = entries[-1].seq
            return entries
        journal.add(Pending(entries[-1].seq, entries, written), owner.publish, owner.restore)
        return None

    async def through(self, owner: Owner, seq: int, run: RunState | None,
                      published: bool = True) -> bool:
        """Write the burst, and wait until event `seq` is committed and (unless
        not `published`) published. The caller holds the task's turn: one
        writer at a time publishes, in order."""
        if self.entries:
            written = self.write(owner, run, inline=True)
            if written:
                await owner.publish(written)
        return await self._journal.through(seq) if published else False

    def write_later(self, owner: Owner) -> None:
        """The agent gave the loop back before its burst was written (it awaits
        something else): write it now."""
        if not self.entries:
            return
        runs = {entry.run for entry in self.entries if entry.run is not None}
        try:
            self.write(owner, None)
        except Exception as exc:  # the burst's runs were told (Run.lost)
            if not isinstance(exc, UnavailableError):
                log.error("a task write failed: %r", exc)
            owner.stop(runs)
