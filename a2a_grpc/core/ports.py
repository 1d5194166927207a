"""Who may listen on a port: one server, or the workers of one `serve
--workers` group, never two servers.

Linux lets any number of sockets of one user listen on a port when each
sets SO_REUSEPORT, and spreads connections over them: a second server
joining a served port would take part of its calls into a store of its
own. So a server first checks that nothing listens there (`ensure_unserved`:
a bind without SO_REUSEPORT fails while any socket listens), and a server
alone in its process group listens without SO_REUSEPORT (none can join it
later). Only the workers of one group share their ports, which their
supervisor holds (`reserve`) before any of them listens.

A reservation (SO_REUSEPORT, not listening) fails the next check, but two
groups starting at once could each check before either reserves: `claim`
checks and reserves under a lock this user's servers take in turn.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path


class PortInUseError(OSError):
    """A server could not listen where it was asked to."""


def _address(host: str, port: int) -> tuple[int, int, int, tuple[object, ...]]:
    family, kind, proto, _, address = socket.getaddrinfo(
        host.strip("[]") or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0]
    return family, kind, proto, address


def unbindable(host: str, port: int, *, shared: bool = False) -> str:
    """Why host:port cannot be listened on, "" when it can. `shared`: as a
    worker of a group binds, beside its own group's sockets (SO_REUSEPORT);
    else as a server alone does, so that any listener there is found, whoever
    it is and however it bound."""
    if port == 0:
        return ""
    try:
        family, kind, proto, address = _address(host, port)
    except socket.gaierror as exc:
        return str(exc.strerror)
    with socket.socket(family, kind, proto) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # TIME_WAIT is no listener
        if shared and hasattr(socket, "SO_REUSEPORT"):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        try:
            sock.bind(address)
        except OSError as exc:
            return str(exc.strerror)
    return ""


def ensure_unserved(host: str, *ports: int) -> None:
    """PortInUseError naming the first of `ports` something listens on (another
    server, ours or not), before this one opens its store."""
    for port in ports:
        if why := unbindable(host, port):
            raise PortInUseError(
                f"cannot listen on {_shown(host, port)} ({why}): another process serves it")


def reserve(host: str, port: int) -> socket.socket:
    """A socket bound to host:port with SO_REUSEPORT, not listening: the port
    stays this group's while its workers (or its Envoy) come and go. Call
    `ensure_unserved` first: SO_REUSEPORT would join another group's port."""
    family, kind, proto, address = _address(host, port)
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    try:
        sock.bind(address)
    except OSError as exc:
        sock.close()
        raise PortInUseError(f"cannot listen on {_shown(host, port)} ({exc.strerror})") from exc
    return sock


def claim(host: str, *ports: int) -> list[socket.socket]:
    """`reserve` each of `ports` for a group of this process's making, after
    `ensure_unserved`, with no other group's claim between the two."""
    with claiming():
        ensure_unserved(host, *ports)
        held: list[socket.socket] = []
        try:
            for port in ports:
                held.append(reserve(host, port))
        except BaseException:
            for sock in held:
                sock.close()
            raise
        return held


@contextlib.contextmanager
def claiming() -> Iterator[None]:
    """The lock a claim holds (per user: another user's sockets cannot join
    this one's group anyway)."""
    lock = Path(tempfile.gettempdir()) / f"a2a-grpc-ports-{os.getuid()}.lock"
    with lock.open("a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        yield


def _shown(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host and not host.startswith("[") else f"{host}:{port}"
