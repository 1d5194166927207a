"""Replicas sharing one store and one event bus (`serve --bus ...`): leases on
the tasks they run.

- Each replica has an id of its own. Every task it writes is held by it for
  `seconds` from the write (the store records holder and lease end on the
  task's row), and it renews whatever it holds every `seconds / 3`.
- A replica that stops renewing (SIGKILL, a hung host, a cut network) loses
  its tasks once their leases end: the next replica to look (each looks every
  `seconds / 3`) claims them and fails them with a clear message, or resumes
  them where the agent implements `resume`. A claim is one conditional
  UPDATE, so two survivors never take the same task. Tasks handed off (no run
  holds them) and tasks waiting for input are never taken.
- At start-up a replica claims only expired leases: starting one never
  touches the tasks of the others. (One process alone, without `--bus`,
  recovers every task left running at start-up, as before.)
- A replica that is stopping (draining, or closing its store) takes over
  nothing: on a clean stop of `serve --workers` every worker stops, and what
  one leaves is the next start's to recover.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Callable

from a2a_grpc.handler.housekeeping import ORPHANED
from a2a_grpc.handler.request_handler import RequestHandler
from a2a_grpc.stores import Claim, LeaseStore

log = logging.getLogger("a2a_grpc.replicas")


class Leases:
    def __init__(self, handler: RequestHandler, store: LeaseStore, seconds: float,
                 stopping: Callable[[], bool] = lambda: False) -> None:
        """`stopping()`: is this server draining? (Then it takes nothing over.)"""
        if seconds <= 0:
            raise ValueError("--lease must be > 0 seconds")
        self.handler, self.store, self.seconds = handler, store, seconds
        self.holder = uuid.uuid4().hex
        self._stopping, self._stopped = stopping, False
        store.hold(self.holder, seconds)

    def stop(self) -> None:
        """From now on take nothing over (the store is about to close)."""
        self._stopped = True

    @property
    def stopping(self) -> bool:
        return self._stopped or self._stopping()

    def claim(self) -> Claim:
        now = time.time_ns()
        return Claim(self.holder, now, now + int(self.seconds * 1e9))

    async def recover(self) -> int:
        """Fail (or resume) the tasks of replicas whose leases ended; how many."""
        found = await self.handler.recover(self.claim(), ORPHANED)
        if found:
            log.warning("took over %d task(s) of a replica that stopped: %s", found,
                        "resumed" if self.handler.executor.resumable else "marked FAILED")
        return found

    async def take_over(self, holder: str) -> None:
        """`holder`'s replica is known to be gone (`serve --workers`' hub says
        so): its leases end now, and this replica claims what it can of them.
        Safe even were it still running: a claim fences its writer off."""
        if self.stopping:
            log.info("a worker stopped while this one stops too: its unfinished tasks, if "
                     "any, are left to the next start")
            return
        try:
            await self.store.renew(holder, 0)
            await self.recover()
        except Exception:
            if self.stopping:  # began stopping meanwhile: its store may be closed
                return
            log.exception("taking over the tasks of a stopped worker failed; they are "
                          "taken over as their leases end")

    async def run(self) -> None:
        """Renew this replica's leases and take over expired ones, until cancelled."""
        while True:
            await asyncio.sleep(self.seconds / 3)
            try:
                # What this process runs, not all it holds: a task whose run it lost
                # (its writes refused) runs out of lease and is taken over.
                await self.store.renew(self.holder, self.claim().until_ns,
                                       self.handler.running_tasks())
                await self.recover()
            except Exception:  # the store is down: logged there; try again next round
                log.exception("renewing leases failed; trying again in %.1f s",
                              self.seconds / 3)
