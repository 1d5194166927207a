"""The SQLite store's write lock, handed from process to process at once.

SQLite lets one connection write at a time. A writer that finds the file
locked by another process waits in SQLite's busy handler, which sleeps 1, 2,
5, 10, ... ms between looks: the lock is often free long before the sleeper
looks again, so processes sharing one file (`serve --workers`, replicas)
spend their time asleep, not writing (docs/benchmarks.md, "Workers"). Our
writers therefore queue on flock(2) on PATH.write-lock first: the kernel
wakes a waiter as the holder lets go. SQLite's own lock still guards the
file (a process that does not take ours, `a2a-grpc backup` or a release
before this one, is waited for by the busy handler as before); ours only
orders our writers.

It also counts, for /metrics and the workers bench, how long transactions
waited for the lock and held it: the held time is the part of a write that
only one process at a time can do (the serial section). `held_cpu_ns` is the
CPU time the writer's thread spent holding it: what the serial section
costs where the holder has a core to itself (with several processes on one
core, the held time also counts the holder's time preempted).
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


class WriteLock:
    def __init__(self, path: Path) -> None:
        self.path = path.with_name(path.name + ".write-lock")
        self._fd: int | None = None
        self.waited_ns = 0  # waiting for the lock, summed over transactions
        self.held_ns = 0  # holding it
        self.held_cpu_ns = 0  # the writer thread's CPU time while holding it
        self.transactions = 0

    def open(self) -> None:
        if self._fd is None:
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    @contextmanager
    def held(self) -> Iterator[None]:
        """The lock, in the writer's thread, for one transaction."""
        fd = self._fd
        if fd is None:  # not open (a store used before open): SQLite's lock alone
            yield
            return
        asked = time.perf_counter_ns()
        fcntl.flock(fd, fcntl.LOCK_EX)
        got, cpu = time.perf_counter_ns(), time.thread_time_ns()
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            self.held_cpu_ns += time.thread_time_ns() - cpu
            self.held_ns += time.perf_counter_ns() - got
            self.waited_ns += got - asked
            self.transactions += 1
