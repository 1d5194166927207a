"""Running a coroutine at once, in the caller, until it first waits; only
then is it handed to an asyncio Task (what Python 3.12's eager tasks do).

Most runs of an agent that answers without awaiting anything else (the
memory store commits at once) end before they would wait: they need no
Task, no turn of the loop to start, nor one to wake whoever waits for them.
The coroutine runs in a context of its own (copied, as a Task's would be),
which the Task keeps when it takes over: what it sets in context variables
stays its own, and is reset there.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Coroutine, Generator
from typing import Any


def start(coro: Coroutine[Any, Any, None], name: str) -> asyncio.Task[None] | None:
    """Run `coro` until it first waits: None when it ended meanwhile (it
    returned or raised: a coroutine that raises here is expected to catch
    what it can, as a Task would only log it), else the Task now running it."""
    context = contextvars.copy_context()
    try:
        waits_on = context.run(coro.send, None)
    except StopIteration:
        return None
    return asyncio.get_running_loop().create_task(
        _Resumed(coro, waits_on), name=name, context=context)


class _Resumed(Coroutine[Any, Any, None]):
    """`coro`, suspended on `waits_on`, as a Task drives it from then on: the
    Task's first step gets `waits_on`, and every later step (a result, or a
    cancellation: one that comes before that first step too) goes to `coro`.
    A class, not a generator: one thrown into before it started would end
    without passing the cancellation on, leaving `coro` suspended for good."""

    __slots__ = ("_coro", "_waits_on")

    def __init__(self, coro: Coroutine[Any, Any, None], waits_on: Any) -> None:
        self._coro, self._waits_on = coro, waits_on

    def send(self, value: Any) -> Any:
        waits_on = self._waits_on
        if waits_on is not _TAKEN:
            self._waits_on = _TAKEN
            return waits_on
        return self._coro.send(value)

    def throw(self, exc: Any, *rest: Any) -> Any:
        self._waits_on = _TAKEN
        return self._coro.throw(exc, *rest)

    def close(self) -> None:
        self._coro.close()

    def __await__(self) -> Generator[Any, None, None]:
        raise TypeError("driven by its Task only")


_TAKEN = object()  # the Task has had what the coroutine waited on
