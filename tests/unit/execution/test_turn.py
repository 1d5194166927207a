"""The actor's mutex (runtime._Turn): one holder, FIFO, and a cancelled waiter
never keeps the turn from the others."""

from __future__ import annotations

import asyncio

import pytest

from a2a_grpc.execution.turns import Turn as _Turn


async def _enter(turn: _Turn) -> None:
    if turn.held:
        await turn.wait()
    else:
        turn.held = True


async def test_one_holder_at_a_time_in_arrival_order() -> None:
    turn, inside, order = _Turn(), [], []

    async def worker(n: int) -> None:
        await _enter(turn)
        try:
            inside.append(n)
            assert len(inside) == 1
            order.append(n)
            await asyncio.sleep(0)
            await asyncio.sleep(0)
        finally:
            inside.remove(n)
            turn.leave()

    await asyncio.gather(*(worker(n) for n in range(20)))
    assert order == list(range(20))
    assert not turn.held


async def test_a_waiter_cancelled_while_waiting_is_skipped() -> None:
    turn = _Turn()
    await _enter(turn)
    first = asyncio.create_task(_enter(turn))
    second = asyncio.create_task(_enter(turn))
    await asyncio.sleep(0)
    first.cancel()
    with pytest.raises(asyncio.CancelledError):
        await first
    turn.leave()  # goes to the second waiter, not the cancelled one
    await asyncio.wait_for(second, 1)
    assert turn.held
    turn.leave()
    assert not turn.held


async def test_a_waiter_cancelled_after_the_hand_over_passes_it_on() -> None:
    turn = _Turn()
    await _enter(turn)
    first = asyncio.create_task(_enter(turn))
    second = asyncio.create_task(_enter(turn))
    await asyncio.sleep(0)
    turn.leave()  # handed to `first`, which has not run yet...
    first.cancel()  # ...and is cancelled before it does
    with pytest.raises(asyncio.CancelledError):
        await first
    await asyncio.wait_for(second, 1)  # the turn went on to `second`
    assert turn.held
    turn.leave()
    assert not turn.held
