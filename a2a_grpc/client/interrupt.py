"""Ctrl-C on a command: it ends with status 130, promptly, without a traceback.

The command's task is cancelled, as asyncio.run does on SIGINT; but the
signal is taken through the loop (`add_signal_handler`: a wakeup fd), so it
is seen at once whatever thread the kernel gave it to and whatever the loop
waits on, and a command that has not ended INTERRUPT_GRACE_S later (a
library below it kept the cancellation, or closing a connection waits on a
peer; seen about once a CI run of the Ctrl-C test, never by hand) leaves at
once. A second Ctrl-C leaves at once too.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import Awaitable

INTERRUPTED = 130  # 128 + SIGINT, as a shell reports a command Ctrl-C ended
INTERRUPT_GRACE_S = 2.0


async def interruptible(work: Awaitable[int]) -> int:
    """`work`'s status, or INTERRUPTED once Ctrl-C ended it."""
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    assert task is not None
    interrupted = False

    def on_interrupt() -> None:
        nonlocal interrupted
        if interrupted:
            _leave()
        interrupted = True
        task.cancel()
        loop.call_later(INTERRUPT_GRACE_S, _leave)

    loop.add_signal_handler(signal.SIGINT, on_interrupt)
    try:
        return await work
    except asyncio.CancelledError:
        if not interrupted:
            raise
        task.uncancel()
        return INTERRUPTED
    finally:
        loop.remove_signal_handler(signal.SIGINT)


def _leave() -> None:
    """Leave now: what was printed is kept; nothing else is left to save."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(INTERRUPTED)
