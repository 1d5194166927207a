"""`serve --helper-threads`: how the process's other threads share a core
with the event loop's.

Beside the loop's thread, a server runs helper threads: grpc.aio's poller
and gRPC's own event-engine threads, the SQLite store's writer and
checkpointer. Each wakes up many times a call and, where it shares a core
with the loop (one core per worker), preempts the loop while it holds the
GIL, then waits for the GIL itself: two context switches a wake-up. On one
core, a gRPC send on the SQLite default took 11 such preemptions of the
loop and cost twice the CPU of a JSON-RPC send (docs/benchmarks.md,
"Helper threads"). `batch` (SCHED_BATCH), `low` (nice 19) or `idle` (SCHED_IDLE) lets a helper
run when the loop waits instead of taking the core from it.

- `batch` only takes away a helper's right to preempt on waking: Linux lets a
  SCHED_BATCH thread run at the next tick or when the running one waits,
  with its full share of the core beside other processes (nice 0).
- `low` and `idle` also lower that share: a helper at nice 19 gets about 1.5%
  of a core another busy process wants, at `idle` nothing. Where a process
  shares its cores with other busy ones (more workers than cores, a busy
  neighbour), its commits and its gRPC I/O would wait behind them.
"""

from __future__ import annotations

import os
import threading

POLICIES = ("normal", "batch", "low", "idle")
LOW_NICE = 19


def settle_helpers(policy: str) -> int:
    """Apply `policy` to every thread of this process but the loop's (the main
    thread); how many. Threads they start later inherit it; those the main
    thread starts later do not."""
    if policy == "normal" or not hasattr(os, "sched_setscheduler"):
        return 0
    main = threading.main_thread().native_id
    done = 0
    for entry in os.listdir("/proc/self/task"):
        tid = int(entry)
        if tid == main:
            continue
        try:
            if policy in ("batch", "idle"):
                os.sched_setscheduler(tid, os.SCHED_BATCH if policy == "batch" else os.SCHED_IDLE,
                                      os.sched_param(0))
            else:
                os.setpriority(os.PRIO_PROCESS, tid, LOW_NICE)
        except (ProcessLookupError, PermissionError):
            continue  # ended meanwhile, or not ours to change
        done += 1
    return done
