"""This process as a supervisor sees it: systemd's (`Type=notify`) or `serve
--workers`' own, which both read the `NOTIFY_SOCKET` protocol (sd_notify:
"READY=1" once serving, "STOPPING=1" as it drains)."""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import socket
import sys

WORKER = "A2A_GRPC_WORKER"  # set by `serve --workers` in each worker: its number
SUPERVISOR = "A2A_GRPC_SUPERVISOR"  # and the supervisor's pid
# The process a supervisor watches, where that is not this one: under
# `--grpc-carrier pyvoy` the app runs in Envoy, and `serve` is the worker.
WORKER_PID = "A2A_GRPC_WORKER_PID"


def worker() -> int | None:
    """This worker's number (1..N) under `serve --workers`, else None."""
    number = os.environ.get(WORKER)
    return int(number) if number else None


def worker_pid() -> int:
    """The pid its supervisor knows this worker by (`a2a_worker_info`)."""
    return int(os.environ.get(WORKER_PID) or os.getpid())


def notify(state: str) -> None:
    """Tell the supervisor, if one listens, e.g. "READY=1"."""
    path = os.environ.get("NOTIFY_SOCKET")
    if not path:
        return
    address = "\0" + path[1:] if path.startswith("@") else path  # @: abstract namespace
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
            sock.sendto(f"{state}\nMAINPID={os.getpid()}".encode(), address)
    except OSError:
        pass  # a supervisor gone: nothing to tell


class StartFailure(Exception):
    """The server could not start, and this is why, already in the user's words
    (what a carrier's app said: pyvoy/app.py), with the exit status."""

    def __init__(self, text: str, code: int) -> None:
        super().__init__(text)
        self.code = code


def fail(message: str, code: int = 1) -> int:
    """Say why this process cannot start, once: on stderr, or, in a worker of
    `serve --workers`, to its supervisor, which says it for all of them (each
    worker would say the same). Returns `code`, the exit status."""
    if worker() is not None and os.environ.get("NOTIFY_SOCKET"):
        notify("STATUS=" + message.replace("\n", " "))
    else:
        print(f"a2a-grpc: {message}", file=sys.stderr)
    return code


def stop_with_parent() -> None:
    """A worker gets SIGTERM (its usual drain) when its supervisor dies, even
    SIGKILLed and whatever the bus (Linux's PR_SET_PDEATHSIG; elsewhere the
    hub's connection closing tells a worker on the hub, not on Redis)."""
    die_with_parent(int(os.environ.get(SUPERVISOR, "0")) or os.getppid(), signal.SIGTERM)


def die_with_parent(parent: int, sig: int) -> bool:
    """`sig` to this process as soon as `parent` (its parent) exits, even
    SIGKILLed: Linux's PR_SET_PDEATHSIG, which lasts as long as the calling
    thread. False where it can't be set (not Linux)."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        if libc.prctl(1, sig) != 0:  # PR_SET_PDEATHSIG
            return False
    except (OSError, AttributeError):
        return False
    if os.getppid() != parent:  # it died before the call: nobody would signal
        signal.raise_signal(sig)
    return True
