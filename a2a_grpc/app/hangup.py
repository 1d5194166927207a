"""SIGHUP: reload what can be reloaded without a restart (TLS certificates,
the API key and Basic user files). asyncio keeps one handler per signal and
loop, so every reload registers here and one handler calls them all."""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import Callable

log = logging.getLogger("a2a_grpc")

_reloads: dict[asyncio.AbstractEventLoop, list[Callable[[], None]]] = {}


def on_hangup(reload: Callable[[], None]) -> Callable[[], None]:
    """Call `reload` on each SIGHUP this process gets while the running loop
    lives; returns what unregisters it. Where signals can't be handled (not
    the main thread, another platform), nothing is registered."""
    loop = asyncio.get_running_loop()
    reloads = _reloads.get(loop)
    if reloads is None:
        try:
            loop.add_signal_handler(signal.SIGHUP, _fire, loop)
        except (NotImplementedError, RuntimeError, ValueError, AttributeError):
            return lambda: None
        reloads = _reloads[loop] = []
    reloads.append(reload)

    def forget() -> None:
        if reload in reloads:
            reloads.remove(reload)
        if not reloads and _reloads.get(loop) is reloads:
            del _reloads[loop]
            if not loop.is_closed():
                loop.remove_signal_handler(signal.SIGHUP)

    return forget


def _fire(loop: asyncio.AbstractEventLoop) -> None:
    log.info("SIGHUP: reloading")
    for reload in list(_reloads.get(loop, ())):
        try:
            reload()
        except Exception:  # one reload failing must not keep the others from theirs
            log.exception("a reload on SIGHUP failed; the previous state is kept")
