"""The request metrics kept as plain numbers read what prometheus_client's own
Histogram and Counter would have exposed: cumulative `le` buckets, a value
on a bound counted in that bucket, the +Inf bucket, the count and sum."""

from __future__ import annotations

import asyncio

from prometheus_client import CollectorRegistry, Histogram, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from a2a_grpc.observe.metrics import LATENCY, Metrics


def samples(text: str, name: str) -> dict[tuple[tuple[str, str], ...], float]:
    return {tuple(sorted(s.labels.items())): s.value
            for family in text_string_to_metric_families(text) for s in family.samples
            if s.name == name}


def test_latency_and_outcomes_match_prometheus_client() -> None:
    observed = [0.0001, LATENCY[0], 0.0007, 0.003, LATENCY[-1], 61.0, 1000.0]
    metrics = Metrics()
    calls = metrics.calls("SendMessage", "jsonrpc")
    for seconds in observed:
        calls.record(seconds, "ok")
    calls.record(0.002, "TASK_NOT_FOUND")
    ours = asyncio.run(metrics.render()).decode()

    reference = CollectorRegistry()
    histogram = Histogram("a2a_request_duration_seconds", "", ("method", "binding"),
                          buckets=LATENCY, registry=reference)
    for seconds in [*observed, 0.002]:
        histogram.labels("SendMessage", "jsonrpc").observe(seconds)
    theirs = generate_latest(reference).decode()

    for name in ("a2a_request_duration_seconds_bucket", "a2a_request_duration_seconds_count",
                 "a2a_request_duration_seconds_sum"):
        assert samples(ours, name) == samples(theirs, name), name
    assert len(samples(ours, "a2a_request_duration_seconds_bucket")) == len(LATENCY) + 1
    answered = samples(ours, "a2a_requests_total")
    call = (("binding", "jsonrpc"), ("method", "SendMessage"))
    assert answered == {(*call, ("outcome", "ok")): len(observed),
                        (*call, ("outcome", "TASK_NOT_FOUND")): 1}


def test_nothing_recorded_exposes_nothing() -> None:
    text = asyncio.run(Metrics().render()).decode()
    assert not samples(text, "a2a_requests_total")
    assert not samples(text, "a2a_request_duration_seconds_count")
