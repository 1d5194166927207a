"""Fresh ids and timestamps, made cheaply: several are made for every message.

`new_id()` is a random (version 4) UUID in its canonical text form, as
`str(uuid.uuid4())` gives, at a quarter of the cost (no UUID object, and
randomness drawn for many ids at once). `sorted_id()` is a version 7 UUID
(RFC 9562: the millisecond, then 74 random bits), for task and context ids:
ids made close in time sort close together, so the stores' indexes on them
take a new task on a page they just wrote instead of a random one (random
ids made the write-ahead log the store's largest cost: docs/benchmarks.md).
`now()` is the current time as a Timestamp, without the datetime round trip
of `Timestamp.GetCurrentTime()`; `nanos_of(ts)` is its inverse in integers.
"""

from __future__ import annotations

import os
import threading
import time

from google.protobuf.timestamp_pb2 import Timestamp

_NS = 1_000_000_000


class _Pool(threading.local):
    """Random hex digits drawn from os.urandom 256 ids at a time: one system call
    per id was half its cost (and a system call gives the GIL away: with the
    SQLite store's thread busy, getting it back took longer than the call). Per
    thread, so two threads never share digits;
    emptied in a forked child, so parent and child never share them either."""

    digits = ""
    at = 0


_pool = _Pool()
_POOL_BYTES = 16 * 256
_VARIANT = "89ab" * 4  # the RFC 4122 variant: the nibble's top two bits are 10


def _empty_pool() -> None:
    _pool.digits, _pool.at = "", 0


os.register_at_fork(after_in_child=_empty_pool)


# The variant digit for a random hex digit (its top two bits become 10).
_VARIANT_OF = {digit: _VARIANT[int(digit, 16)] for digit in "0123456789abcdef"}
# sorted_id's text up to its random part, for the millisecond it was made in:
# ids made in one millisecond share it (a tuple, so threads read both at once).
_prefix: tuple[int, str] = (-1, "")


def new_id() -> str:
    h = _digits()
    # Version 4 in the 13th digit, the variant in the 17th.
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{_VARIANT_OF[h[16]]}{h[17:20]}-{h[20:]}"


def sorted_id() -> str:
    global _prefix
    h = _digits()
    ms, prefix = time.time_ns() // 1_000_000, _prefix
    if prefix[0] != ms:
        digits = f"{ms & 0xFFFF_FFFF_FFFF:012x}"
        prefix = _prefix = (ms, f"{digits[:8]}-{digits[8:]}-7")
    return f"{prefix[1]}{h[13:16]}-{_VARIANT_OF[h[16]]}{h[17:20]}-{h[20:]}"


def _digits() -> str:
    """32 random hex digits."""
    pool = _pool
    at = pool.at
    if at >= len(pool.digits):
        pool.digits, at = os.urandom(_POOL_BYTES).hex(), 0
    pool.at = at + 32
    return pool.digits[at:at + 32]


def now() -> Timestamp:
    ns = time.time_ns()
    return Timestamp(seconds=ns // _NS, nanos=ns % _NS)


def stamp(ts: Timestamp) -> None:
    """Set `ts` to the current time, in place."""
    ns = time.time_ns()
    ts.seconds, ts.nanos = ns // _NS, ns % _NS


def nanos_of(ts: Timestamp) -> int:
    return ts.seconds * _NS + ts.nanos
