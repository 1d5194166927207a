"""Fresh ids: canonical version-4 UUIDs, never repeated across threads or a fork;
version-7 UUIDs that sort by the millisecond they were made in."""

from __future__ import annotations

import os
import threading
import time
import uuid

from a2a_grpc.core.ids import new_id, sorted_id


def test_ids_are_canonical_random_uuids() -> None:
    seen = set()
    for _ in range(5000):  # many refills of the pool
        text = new_id()
        parsed = uuid.UUID(text)
        assert str(parsed) == text
        assert parsed.version == 4 and parsed.variant == uuid.RFC_4122
        seen.add(text)
    assert len(seen) == 5000


def test_sorted_ids_are_version_7_and_sort_by_time() -> None:
    before = time.time_ns() // 1_000_000
    made = []
    for _ in range(3000):
        made.append(sorted_id())
        if len(made) % 1000 == 0:
            time.sleep(0.002)  # the next ones are made in a later millisecond
    after = time.time_ns() // 1_000_000
    for text in made:
        parsed = uuid.UUID(text)
        assert str(parsed) == text
        assert parsed.version == 7 and parsed.variant == uuid.RFC_4122
        assert before <= parsed.int >> 80 <= after  # the first 48 bits: the millisecond
    assert len(set(made)) == 3000
    assert made[999] < made[1000] < made[2000]  # across milliseconds, they sort


def test_threads_never_share_digits() -> None:
    out: dict[int, list[str]] = {}
    start = threading.Barrier(4)

    def make(n: int) -> None:
        start.wait()
        out[n] = [new_id() for _ in range(2000)]

    threads = [threading.Thread(target=make, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    every = [i for ids in out.values() for i in ids]
    assert len(set(every)) == len(every) == 8000


def test_a_forked_child_does_not_repeat_its_parent() -> None:
    new_id()  # the pool now holds digits a child would inherit
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its next ids, then out
        os.write(write, " ".join(new_id() for _ in range(40)).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as f:
        child = f.read().split()
    os.waitpid(pid, 0)
    parent = [new_id() for _ in range(40)]
    assert len(child) == 40
    assert not set(child) & set(parent)
