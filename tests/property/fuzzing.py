"""What the fuzz tests share: how many cases (A2A_FUZZ_EXAMPLES, default 150;
the README's long run sets 100000), one server per test for all its cases,
and the properties every answer must have."""

from __future__ import annotations

import os
import re

from hypothesis import HealthCheck, settings

from tests.conftest import Stack, StackFactory

EXAMPLES = int(os.environ.get("A2A_FUZZ_EXAMPLES", "150"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, derandomize=EXAMPLES > 1000,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow])
# What must never reach a client: a traceback, a file path, a Python type name.
LEAKS = re.compile(r"Traceback|File \"|site-packages|\.py\"|Exception:|object at 0x")


async def one_stack(stack: StackFactory) -> Stack:
    """The same server for every case of one test (the factory is per test)."""
    made: Stack | None = getattr(stack, "fuzz_stack", None)
    if made is None:
        made = await stack(push=True)
        stack.fuzz_stack = made  # type: ignore[attr-defined]
    return made


async def still_answers(s: Stack) -> None:
    """A well-formed call right after gets its right answer."""
    async with s.session.get(s.base_url + "/tasks?pageSize=1") as resp:
        assert resp.status == 200, await resp.text()
        assert "tasks" in await resp.json()
