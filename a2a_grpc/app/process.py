"""This process as a supervisor sees it: systemd's (`Type=notify`) or `serve
--workers`' own, which both read the `NOTIFY_SOCKET` protocol (sd_notify:
"READY=1" once serving, "STOPPING=1" as it drains)."""

from __future__ import annotations

import os
import socket

WORKER = "A2A_GRPC_WORKER"  # set by `serve --workers` in each worker: its number


def worker() -> int | None:
    """This worker's number (1..N) under `serve --workers`, else None."""
    number = os.environ.get(WORKER)
    return int(number) if number else None


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
