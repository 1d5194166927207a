"""The checker of a chaos run: the history (load.py) against the store as the
replicas tell it once the faults are over and every task had time to settle.

- lost: an acknowledged operation whose task the store does not have, or has
  in a state that contradicts what the client was told (a final state other
  than the one acknowledged);
- two finals: a task seen in two different final states, by clients or by
  the store;
- streams: an event seen twice, or a gap between the events a stream saw
  (they are numbered), or a stream that never saw a final state;
- orphans: a task left SUBMITTED or WORKING after the leases ran out;
- duplicates: two tasks made of one messageId (none may be);
- push: a task sent with a webhook whose final state's notification never
  came, or whose notifications skip an event, or a notification that came
  again with another body than the first time under its Idempotency-Key
  (those delivered twice are counted, and their rate given: at least once is
  the promise).
Figures: operations by kind, the longest unavailability a client saw (moving
from replica to replica; and the slowest blocking send of an instant task,
which includes waiting on a paused replica), and the p50/p99 latency of
blocking sends in and out of fault windows.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import aiohttp

from tools.chaos.load import FINAL, HEADERS, Op

LIVE = {"TASK_STATE_SUBMITTED", "TASK_STATE_WORKING"}


@dataclass
class Verdict:
    ops: dict[str, int] = field(default_factory=dict)
    acknowledged: int = 0
    lost: list[str] = field(default_factory=list)
    two_finals: list[str] = field(default_factory=list)
    stream_faults: list[str] = field(default_factory=list)
    orphans: list[str] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)
    push_faults: list[str] = field(default_factory=list)
    push_delivered: int = 0
    push_duplicates: int = 0
    push_duplicate_rate: float = 0.0  # duplicates / deliveries
    push_changed: list[str] = field(default_factory=list)  # a key again, another body
    unanswered: int = 0  # operations no replica answered in the end (not acknowledged)
    refused: dict[str, int] = field(default_factory=dict)  # other answers that were no ack
    longest_unavailable: float = 0.0  # s a client spent moving between replicas for an answer
    slowest_send: float = 0.0  # s the slowest blocking send of an instant task took
    latency: dict[str, float] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not (self.lost or self.two_finals or self.stream_faults or self.orphans
                    or self.duplicates or self.push_faults or self.push_changed)


async def read_tasks(urls: list[str], settle: float) -> dict[str, dict[str, Any]]:
    """Every task, as a replica lists it, once none is left SUBMITTED or WORKING
    (or `settle` s have gone by: then what is left is an orphan)."""
    deadline = time.monotonic() + settle
    async with aiohttp.ClientSession() as http:
        while True:
            tasks = await _list_all(http, urls)
            if not any(t["status"]["state"] in LIVE for t in tasks.values()) or \
                    time.monotonic() > deadline:
                return tasks
            await asyncio.sleep(0.5)


async def _list_all(http: aiohttp.ClientSession, urls: list[str]) -> dict[str, dict[str, Any]]:
    for url in urls:
        try:
            tasks: dict[str, dict[str, Any]] = {}
            token = ""
            while True:
                params: dict[str, Any] = {"pageSize": 100, "historyLength": 1}
                if token:
                    params["pageToken"] = token
                async with http.post(url + "/", headers=HEADERS, json={
                        "jsonrpc": "2.0", "id": 1, "method": "ListTasks",
                        "params": params}) as resp:
                    page = (await resp.json())["result"]
                for t in page.get("tasks", []):
                    tasks[t["id"]] = t
                token = page.get("nextPageToken", "")
                if not token:
                    return tasks
        except (aiohttp.ClientError, KeyError):
            continue  # that replica is down: ask another
    raise RuntimeError("no replica lists the tasks")


def check(ops: list[Op], tasks: dict[str, dict[str, Any]],
          faults: list[tuple[float, float]], pushed: dict[str, list[int]] | None = None,
          push_finals: dict[str, str] | None = None,
          push_changed: list[str] | None = None) -> Verdict:
    v = Verdict(ops=dict(Counter(op.kind for op in ops)))
    finals: dict[str, set[str]] = {}
    for op in ops:
        v.longest_unavailable = max(v.longest_unavailable, op.unavailable)
        if op.task_id:
            finals.setdefault(op.task_id, set()).update(op.finals)
        if not op.acked:
            if op.error.startswith("Refused"):
                v.unanswered += 1
            else:  # an error answer, e.g. a cancel that came after a survivor failed the task
                why = op.error.split(":")[0] + ":" + op.error.split(":")[1][:40] \
                    if ":" in op.error else op.error
                v.refused[why] = v.refused.get(why, 0) + 1
            continue
        v.acknowledged += 1
        stored = tasks.get(op.task_id)
        if stored is None:
            v.lost.append(f"op {op.id} ({op.kind}): task {op.task_id} acknowledged "
                          f"{op.acked}, not in the store")
        elif op.acked in FINAL and stored["status"]["state"] != op.acked:
            v.lost.append(f"op {op.id} ({op.kind}): task {op.task_id} acknowledged "
                          f"{op.acked}, stored {stored['status']['state']}")
        if op.kind == "stream":
            v.stream_faults += _stream_faults(op)
    for task_id, task in tasks.items():
        state = task["status"]["state"]
        seen = finals.get(task_id, set()) | ({state} if state in FINAL else set())
        if len(seen) > 1:
            v.two_finals.append(f"task {task_id}: {sorted(seen)}")
        if state in LIVE:
            v.orphans.append(f"task {task_id}: {state}")
    by_message = Counter(t["history"][0]["messageId"] for t in tasks.values()
                         if t.get("history"))
    v.duplicates = [m for m, n in by_message.items() if n > 1]
    sends = [op for op in ops if op.kind == "send" and op.acked]
    v.latency = _latency(sends, faults)
    v.slowest_send = max((op.end - op.start for op in sends), default=0.0)
    for op in ops:
        if op.kind == "push" and op.acked and pushed is not None and push_finals is not None:
            _check_push(v, op, tasks.get(op.task_id), pushed.get(op.task_id, []),
                        push_finals.get(op.task_id))
    v.push_changed = list(push_changed or [])
    if v.push_delivered:
        v.push_duplicate_rate = round(v.push_duplicates / v.push_delivered, 5)
    return v


def _check_push(v: Verdict, op: Op, task: dict[str, Any] | None, seqs: list[int],
                final: str | None) -> None:
    v.push_delivered += len(seqs)
    v.push_duplicates += len(seqs) - len(set(seqs))
    state = task["status"]["state"] if task else "?"
    if state in FINAL and final != state:
        v.push_faults.append(f"op {op.id}: task {op.task_id} is {state}; its webhook was "
                             f"told {final or 'no final state'}")
    got = sorted(set(seqs))
    if got and got != list(range(got[0], got[-1] + 1)):
        v.push_faults.append(f"op {op.id}: task {op.task_id}: notifications skip events: {got}")


def _stream_faults(op: Op) -> list[str]:
    out = []
    if len(set(op.seqs)) != len(op.seqs):
        out.append(f"op {op.id}: stream saw an event twice: {op.trace}")
    elif op.seqs and op.seqs != list(range(op.seqs[0], op.seqs[0] + len(op.seqs))):
        out.append(f"op {op.id}: stream has a gap: {op.trace}")
    if op.acked not in FINAL:
        out.append(f"op {op.id}: stream ended without a final state")
    return out


def _latency(sends: list[Op], faults: list[tuple[float, float]]) -> dict[str, float]:
    def during(op: Op) -> bool:
        return any(op.start < end and op.end > start for start, end in faults)

    out: dict[str, float] = {}
    for name, group in (("calm", [o for o in sends if not during(o)]),
                        ("faults", [o for o in sends if during(o)])):
        times = sorted(o.end - o.start for o in group)
        if len(times) >= 2:
            out[f"{name}_p50_ms"] = 1000 * statistics.median(times)
            out[f"{name}_p99_ms"] = 1000 * times[min(len(times) - 1, int(len(times) * 0.99))]
            out[f"{name}_n"] = len(times)
    return out
