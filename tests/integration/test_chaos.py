"""The short chaos run (`make chaos` for the long one, docs/reliability.md):
three `serve` replicas on PostgreSQL and a Redis of the run's own, under a
mixed load, while a replica is SIGKILLed and restarted, one is SIGSTOPped
past its lease, one is cut off PostgreSQL (black-holed) past its lease,
Redis is killed and restarted, and a replica is killed with a push delivery
in flight. Fails on any acknowledged operation lost, any task with two final
states, any stream that saw an event twice or skipped one, any task left
running, any messageId that made two tasks, any webhook not told a final
state or skipping an event, any notification that came again changed."""

from __future__ import annotations

import argparse
import os
import shutil

import pytest

from tests.stores import drop_schema, postgres_schema
from tools.chaos.__main__ import run


@pytest.mark.timeout(400)
async def test_a_short_chaos_run_loses_nothing() -> None:
    await drop_schema(await postgres_schema())  # PostgreSQL is there (else skip, or fail in CI)
    if shutil.which("redis-server") is None:
        message = "Debian's redis-server is not installed (the run starts its own Redis)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    verdict = await run(argparse.Namespace(minutes=0.9, rate=6, fault_every=9, lease=3,
                                           seed=7, doc=False, keep=False))
    assert verdict.acknowledged > 100
    assert set(verdict.ops) == {"send", "async", "stream", "cancel", "followup", "push"}
    assert verdict.lost == [] and verdict.two_finals == [] and verdict.orphans == []
    assert verdict.stream_faults == [] and verdict.duplicates == []
    assert verdict.push_changed == []
    assert verdict.ok
