"""Idempotent sends across shards: a messageId is looked for and recorded by
one process at a time.

In one SQLite file, the a2a_messages key refuses a second task for a
messageId (MessageTakenError). Shards (shards.py) record a message in the
shard of its task, so two workers given the same message at the same
instant would each find nothing and each create a task. Before looking, a
worker therefore locks one byte of PATH.claims, at an offset hashed from
(tenant, owner, messageId), and holds it until the task recording the
message is committed: the other worker waits, then finds that task.

The lock is an open file description lock (fcntl F_OFD_SETLK): the kernel
lets it go when the process ends, however it ends, and two stores of one
process (tests) exclude each other as two processes do. Offsets this
process holds are counted, so two of its own sends hashed to one byte do
not release each other's claim. A claim nothing records (a send answered
without a task, a failed one) is let go after `HOLD_S`.
"""

from __future__ import annotations

import asyncio
import fcntl
import hashlib
import os
import struct
from pathlib import Path

from a2a_grpc.stores.base import Scope

SPAN = 1 << 40  # offsets hashed over this many bytes: two messages rarely share one
HOLD_S = 10.0  # a claim no write lets go is let go after this


def _lock(fd: int, offset: int, kind: int) -> bool:
    """Lock (or unlock) one byte; False when another holds it."""
    # struct flock: l_type, l_whence (short), l_start, l_len (off_t), l_pid (int) + padding
    spec = struct.pack("hhqqi4x", kind, os.SEEK_SET, offset, 1, 0)
    try:
        fcntl.fcntl(fd, fcntl.F_OFD_SETLK, spec)
    except BlockingIOError:
        return False
    except OSError as exc:
        if exc.errno in (11, 13):  # EAGAIN, EACCES: held by another
            return False
        raise
    return True


class MessageClaims:
    def __init__(self, path: Path) -> None:
        self.path = path.with_name(path.name + ".claims")
        self._fd: int | None = None
        self._held: dict[int, int] = {}  # offset -> how many of our claims hold it
        self._claims: dict[tuple[Scope, str], tuple[int, asyncio.TimerHandle]] = {}

    def open(self) -> None:
        if self._fd is None:
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)

    def close(self) -> None:
        for key in list(self._claims):
            self.release(*key)
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    async def claim(self, scope: Scope, message_id: str) -> None:
        """Hold (scope, message_id) until `release` (or HOLD_S); waits while
        another process holds it."""
        key = (scope, message_id)
        if key in self._claims or self._fd is None:
            return  # ours already (the same message twice in this process: SentMessages)
        digest = hashlib.blake2b(f"{scope.tenant}\0{scope.owner}\0{message_id}".encode(),
                                 digest_size=8).digest()
        offset = int.from_bytes(digest, "big") % SPAN
        pause = 0.001
        while offset not in self._held and not _lock(self._fd, offset, fcntl.F_WRLCK):
            # Another process holds it, for a few ms (its task's first commit) or
            # HOLD_S at most: looked at again after a pause, not waited for in a
            # thread (a flood of such sends would take every thread of the pool).
            await asyncio.sleep(pause)
            pause = min(pause * 2, 0.05)
            if key in self._claims or self._fd is None:
                return  # claimed meanwhile by a send of ours, or closed
        self._held[offset] = self._held.get(offset, 0) + 1
        timer = asyncio.get_running_loop().call_later(HOLD_S, self.release, *key)
        self._claims[key] = (offset, timer)

    def release(self, scope: Scope, message_id: str) -> None:
        claimed = self._claims.pop((scope, message_id), None)
        if claimed is None:
            return
        offset, timer = claimed
        timer.cancel()
        left = self._held[offset] - 1
        if left:
            self._held[offset] = left
            return
        del self._held[offset]
        if self._fd is not None:
            _lock(self._fd, offset, fcntl.F_UNLCK)

    def holds(self, scope: Scope, message_id: str) -> bool:
        return (scope, message_id) in self._claims
