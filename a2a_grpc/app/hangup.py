"""SIGHUP: reload what can be reloaded without a restart (TLS certificates,
the API key and Basic user files). asyncio keeps one handler per signal and
loop, so every reload registers here and one handler calls them all."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import Callable

log = logging.getLogger("a2a_grpc")

_reloads: dict[asyncio.AbstractEventLoop, list[Callable[[], None]]] = {}


def on_hangup(reload: Callable[[], None]) -> Callable[[], None]:
    """Call `reload` on each SIGHUP this process gets while the running loop
    lives, and on `reload_all()`; returns what unregisters it. Where signals
    can't be handled (not the main thread: Envoy's embedded Python, another
    platform), only `reload_all()` calls it."""
    loop = asyncio.get_running_loop()
    reloads = _reloads.get(loop)
    if reloads is None:
        reloads = _reloads[loop] = []
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError, AttributeError):
            loop.add_signal_handler(signal.SIGHUP, _fire, loop)
    reloads.append(reload)

    def forget() -> None:
        if reload in reloads:
            reloads.remove(reload)
        if not reloads and _reloads.get(loop) is reloads:
            del _reloads[loop]
            if not loop.is_closed():
                with contextlib.suppress(NotImplementedError, RuntimeError, ValueError,
                                         AttributeError):
                    loop.remove_signal_handler(signal.SIGHUP)

    return forget


def reload_all() -> None:
    """What SIGHUP does, asked another way (pyvoy/drain.py: `serve`
    passes its SIGHUP on to the app Envoy runs)."""
    _fire(asyncio.get_running_loop())


def _fire(loop: asyncio.AbstractEventLoop) -> None:
    log.info("SIGHUP: reloading")
    for reload in list(_reloads.get(loop, ())):
        try:
            reload()
        except Exception:  # one reload failing must not keep the others from theirs
            log.exception("a reload on SIGHUP failed; the previous state is kept")
