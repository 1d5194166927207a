"""Metrics (prometheus_client), one registry per server.

What the hot path pays is kept small: a request adds to three plain numbers
(`Calls.record`, in ObservedService: its outcome, its latency bucket and
sum); events published and the subscribers' backlog are plain numbers the
bus keeps, and tasks by state a query of the store, all read only when
/metrics is scraped. prometheus_client's own Counter and Histogram take a
lock on every increment and find a histogram's bucket in a Python loop, a
cost paid on every call (docs/benchmarks.md has the measure); a server's
calls all run on its event loop, as does the scrape, so plain numbers do.

| metric | labels | what |
|---|---|---|
| a2a_requests_total | method, binding, outcome | operations answered: "ok" or the error reason |
| a2a_request_duration_seconds | method, binding | time to answer (a stream: its first event) |
| a2a_open_streams | method, binding | streams open now |
| a2a_stream_events_total | method, binding | events streamed (counted as each stream ends) |
| a2a_events_published_total | | events committed and published by this process |
| a2a_stream_backlog_events | | events published, not yet taken by their streams (fan-out lag) |
| a2a_tasks | state | tasks in the store by state (read at most every 5 s) |
| a2a_agent_runs | | agent runs going on in this process |
| a2a_store_seconds | op | store transactions: `commit` (a group of appends), `read`, `write` |
| a2a_store_write_lock_seconds_total | phase, shard | SQLite: `waited`, `held`, `held_cpu` |
| a2a_push_notifications_total | outcome | push attempts: delivered, retried, dead (dead-lettered) |
| a2a_limit_refusals_total | limit | calls refused by a per-caller limit (limits.py) |
"""

from __future__ import annotations

import time
from bisect import bisect_left
from collections.abc import Awaitable, Callable, Iterator

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector

from a2a_grpc.core import states

# Seconds: a memory-store send is ~0.2 ms, a durable one ~1-3 ms, a slow agent minutes.
LATENCY = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
           5.0, 10.0, 30.0, 60.0)
STORE_LATENCY = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                 0.25, 1.0)
LISTED = (states.SUBMITTED, states.WORKING, states.INPUT_REQUIRED, states.AUTH_REQUIRED,
          states.COMPLETED, states.FAILED, states.CANCELED, states.REJECTED)
STATES_EVERY = 5.0  # seconds between two counts of the tasks by state


class Metrics:
    """The server's collectors. `sources` (set by launch) are read at scrape time."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        r = self.registry
        self._requests = _Requests()
        r.register(self._requests)
        self.streams = Gauge("a2a_open_streams", "Streams open now.", ("method", "binding"),
                             registry=r)
        self.stream_events = Counter("a2a_stream_events_total", "Events written to streams "
                                     "(counted when each stream ends).", ("method", "binding"),
                                     registry=r)
        self.store = Histogram("a2a_store_seconds", "Store transactions by kind.", ("op",),
                               buckets=STORE_LATENCY, registry=r)
        self.push = Counter("a2a_push_notifications", "Push notification attempts by outcome.",
                            ("outcome",), registry=r)
        for outcome in ("delivered", "retried", "dead"):
            self.push.labels(outcome)
        self._store_ops = {op: self.store.labels(op) for op in ("commit", "read", "write")}
        self._live = _Live()
        r.register(self._live)

    def calls(self, method: str, binding: str) -> Calls:
        """Where the calls of one operation on one binding are counted."""
        return self._requests.of(method, binding)

    def store_timer(self, op: str, seconds: float) -> None:
        """What a store calls after each transaction (SqlTaskStore.timings)."""
        self._store_ops[op].observe(seconds)

    def watch(self, *, published: Callable[[], int], backlog: Callable[[], int],
              runs: Callable[[], int],
              count_states: Callable[[], Awaitable[dict[int, int]]] | None,
              write_lock: Callable[[], list[tuple[int, int, int]]] | None = None) -> None:
        """Where the numbers read at scrape time come from (the bus, the runs,
        the store; `write_lock`: ns waited for, held, and the CPU time held,
        SQLite only, per shard)."""
        live = self._live
        live.published, live.backlog, live.runs = published, backlog, runs
        live.count_states, live.write_lock = count_states, write_lock

    async def render(self) -> bytes:
        """The Prometheus text exposition, the task counts refreshed if stale."""
        await self._live.refresh()
        return generate_latest(self.registry)


class Calls:
    """The answered calls of one operation on one binding: how many, by outcome,
    and their latencies (a histogram with LATENCY's buckets)."""

    __slots__ = ("buckets", "outcomes", "sum")

    def __init__(self) -> None:
        self.buckets = [0] * (len(LATENCY) + 1)  # not cumulative; the last is +Inf
        self.sum = 0.0
        self.outcomes: dict[str, int] = {}

    def record(self, seconds: float, outcome: str) -> None:
        self.buckets[bisect_left(LATENCY, seconds)] += 1  # bucket i: <= LATENCY[i]
        self.sum += seconds
        outcomes = self.outcomes
        outcomes[outcome] = outcomes.get(outcome, 0) + 1


class _Requests(Collector):
    """a2a_requests_total and a2a_request_duration_seconds, from the Calls."""

    def __init__(self) -> None:
        self._calls: dict[tuple[str, str], Calls] = {}

    def of(self, method: str, binding: str) -> Calls:
        calls = self._calls.get((method, binding))
        if calls is None:
            calls = self._calls[(method, binding)] = Calls()
        return calls

    def collect(self) -> Iterator[Metric]:
        answered = CounterMetricFamily(
            "a2a_requests", "A2A operations answered, by outcome (ok, or the A2A error "
            "reason).", labels=("method", "binding", "outcome"))
        latency = HistogramMetricFamily(
            "a2a_request_duration_seconds", "Time to answer an operation (a stream: to its "
            "first event).", labels=("method", "binding"))
        bounds = [*map(repr, LATENCY), "+Inf"]  # as prometheus_client writes them
        for (method, binding), calls in sorted(self._calls.items()):
            for outcome, n in sorted(calls.outcomes.items()):
                answered.add_metric((method, binding, outcome), n)
            cumulative, total = [], 0
            for bound, n in zip(bounds, calls.buckets, strict=True):
                total += n
                cumulative.append((bound, total))
            latency.add_metric((method, binding), cumulative, calls.sum)
        yield answered
        yield latency


class _Live(Collector):
    """The numbers read when scraped rather than counted on the hot path."""

    def __init__(self) -> None:
        self.published: Callable[[], int] = lambda: 0
        self.backlog: Callable[[], int] = lambda: 0
        self.runs: Callable[[], int] = lambda: 0
        self.count_states: Callable[[], Awaitable[dict[int, int]]] | None = None
        self.write_lock: Callable[[], list[tuple[int, int, int]]] | None = None
        self._states: dict[int, int] = {}
        self._counted = float("-inf")

    async def refresh(self) -> None:
        if self.count_states is None or time.monotonic() - self._counted < STATES_EVERY:
            return
        self._counted = time.monotonic()
        try:
            self._states = await self.count_states()
        except Exception:  # the store is down: /readyz says so; keep the last count
            self._counted = float("-inf")

    def collect(self) -> Iterator[Metric]:
        yield CounterMetricFamily("a2a_events_published", "Events committed and published "
                                  "to the bus by this process.", value=self.published())
        yield GaugeMetricFamily("a2a_stream_backlog_events", "Events published but not yet "
                                "taken by their streams (fan-out lag).", value=self.backlog())
        yield GaugeMetricFamily("a2a_agent_runs", "Agent runs going on in this process.",
                                value=self.runs())
        if self.write_lock is not None:
            lock = CounterMetricFamily("a2a_store_write_lock_seconds", "Time the store's write "
                                       "transactions waited for its write lock and held it, "
                                       "and the writer's CPU time while holding it (held_cpu), "
                                       "per shard (each file has its own).",
                                       labels=("phase", "shard"))
            for shard, times in enumerate(self.write_lock()):
                for phase, ns in zip(("waited", "held", "held_cpu"), times, strict=True):
                    lock.add_metric((phase, str(shard)), ns / 1e9)
            yield lock
        if self.count_states is not None:
            tasks = GaugeMetricFamily("a2a_tasks", "Tasks in the store by state.",
                                      labels=("state",))
            for state in LISTED:
                tasks.add_metric((states.name(state),), self._states.get(int(state), 0))
            yield tasks
