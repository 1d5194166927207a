"""Two groups of workers starting at once (core/ports.py `claim`): each
checks that nothing listens on its ports, then reserves them with
SO_REUSEPORT; a group that checked while the other had checked but not yet
reserved would join it. Claims take turns, so the second one sees the
first's reservation."""

from __future__ import annotations

import socket
import threading

import pytest

from a2a_grpc.core.ports import PortInUseError, claim, claiming, ensure_unserved, reserve


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def test_a_claim_waits_for_the_one_under_way_and_then_sees_its_reservation() -> None:
    port = free_port()
    outcome: list[BaseException | list[socket.socket]] = []
    ended = threading.Event()

    def second() -> None:
        try:
            outcome.append(claim("127.0.0.1", port))
        except BaseException as exc:
            outcome.append(exc)
        ended.set()

    with claiming():  # the first group, between its check and its reservation
        ensure_unserved("127.0.0.1", port)
        other = threading.Thread(target=second)
        other.start()
        # Without the turns the second claim ends here at once, joining the port.
        assert not ended.wait(0.3), "a claim went ahead while another was under way"
        first = reserve("127.0.0.1", port)
    other.join(30)
    try:
        [refused] = outcome
        assert isinstance(refused, PortInUseError), refused
        assert "another process serves it" in str(refused)
    finally:
        first.close()
        for sock in outcome[0] if isinstance(outcome[0], list) else ():
            sock.close()


def test_a_claim_holds_every_port_or_none() -> None:
    free, taken = free_port(), socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    try:
        with pytest.raises(PortInUseError):
            claim("127.0.0.1", free, taken.getsockname()[1])
        held = claim("127.0.0.1", free)  # the first port was let go
        for sock in held:
            sock.close()
    finally:
        taken.close()
