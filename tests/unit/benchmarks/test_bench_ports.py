"""The benchmark's servers get ports of their own, and a port two processes
listen on (SO_REUSEPORT, as gRPC servers bind) is seen: once, a run measured
the SDK's gRPC server in the ceiling's rows that way (benchmarks/servers.py)."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

from benchmarks.servers import free_port, listeners


@contextmanager
def listening(port: int, times: int) -> Iterator[None]:
    with ExitStack() as stack:
        for _ in range(times):
            s = stack.enter_context(socket.socket())
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            s.bind(("127.0.0.1", port))
            s.listen()
        yield


def test_a_port_is_handed_to_one_server_only() -> None:
    ports = [free_port() for _ in range(500)]
    assert len(set(ports)) == len(ports)


def test_a_second_listener_on_a_port_is_counted() -> None:
    port = free_port()
    assert listeners(port) == 0
    with listening(port, 1):
        assert listeners(port) == 1
    with listening(port, 2):
        assert listeners(port) == 2
    assert listeners(port) == 0
