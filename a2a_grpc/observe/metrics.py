"""Metrics (prometheus_client), one registry per server.

What the hot path pays is kept small: a request costs one counter and one
histogram observation (in ObservedService); events published and the
subscribers' backlog are plain numbers the bus keeps, and tasks by state a
query of the store, all read only when /metrics is scraped.

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
| a2a_push_notifications_total | outcome | push attempts: delivered, retried, dead (dead-lettered) |
| a2a_limit_refusals_total | limit | calls refused by a per-caller limit (limits.py) |
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Iterator

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
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
        self.requests = Counter("a2a_requests_total", "A2A operations answered, by outcome "
                                "(ok, or the A2A error reason).",
                                ("method", "binding", "outcome"), registry=r)
        self.latency = Histogram("a2a_request_duration_seconds", "Time to answer an operation "
                                 "(a stream: to its first event).", ("method", "binding"),
                                 buckets=LATENCY, registry=r)
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

    def store_timer(self, op: str, seconds: float) -> None:
        """What a store calls after each transaction (SqlTaskStore.timings)."""
        self._store_ops[op].observe(seconds)

    def watch(self, *, published: Callable[[], int], backlog: Callable[[], int],
              runs: Callable[[], int],
              count_states: Callable[[], Awaitable[dict[int, int]]] | None) -> None:
        """Where the numbers read at scrape time come from (the bus, the runs,
        the store)."""
        live = self._live
        live.published, live.backlog, live.runs = published, backlog, runs
        live.count_states = count_states

    async def render(self) -> bytes:
        """The Prometheus text exposition, the task counts refreshed if stale."""
        await self._live.refresh()
        return generate_latest(self.registry)


class _Live(Collector):
    """The numbers read when scraped rather than counted on the hot path."""

    def __init__(self) -> None:
        self.published: Callable[[], int] = lambda: 0
        self.backlog: Callable[[], int] = lambda: 0
        self.runs: Callable[[], int] = lambda: 0
        self.count_states: Callable[[], Awaitable[dict[int, int]]] | None = None
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
        if self.count_states is not None:
            tasks = GaugeMetricFamily("a2a_tasks", "Tasks in the store by state.",
                                      labels=("state",))
            for state in LISTED:
                tasks.add_metric((states.name(state),), self._states.get(int(state), 0))
            yield tasks
