"""The SQLite store's write lock (stores/sqlite_lock.py): our writers queue on
flock(2) on PATH.write-lock before SQLite's own lock, so the lock passes from
process to process as it is let go instead of after the busy handler's
sleeps; the time waited and held is counted and shown in /metrics."""

from __future__ import annotations

import asyncio
import re
import sys
import uuid
from pathlib import Path

import aiohttp

from a2a_grpc.stores import Scope
from a2a_grpc.stores.sqlite import SqliteTaskStore
from tests.processes import reap, start_server

HOLD = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
fcntl.flock(fd, fcntl.LOCK_EX)
print("held", flush=True)
sys.stdin.readline()
"""


async def test_a_write_waits_for_another_process_holding_the_lock_then_goes_on(
        tmp_path: Path) -> None:
    store = SqliteTaskStore(tmp_path / "tasks.db")
    await store.open()
    holder = await asyncio.create_subprocess_exec(
        sys.executable, "-c", HOLD, str(store.write_lock.path),
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
    assert holder.stdin is not None and holder.stdout is not None
    try:
        assert await holder.stdout.readline() == b"held\n"
        scope = Scope("", "someone")
        waited_before = store.write_lock.waited_ns
        write = asyncio.ensure_future(store.save_context_state(scope, "c1", "n", b"kept"))
        done, _ = await asyncio.wait({write}, timeout=0.3)
        assert not done, "a write went on while another process held the write lock"
        holder.stdin.write(b"\n")  # let go
        await holder.stdin.drain()
        await asyncio.wait_for(write, 30)
        assert await store.context_state(scope, "c1", "n") == b"kept"
        assert store.write_lock.waited_ns - waited_before >= 0.3e9
        assert store.write_lock.held_ns > 0 and store.write_lock.transactions > 0
    finally:
        if holder.returncode is None:
            holder.kill()
        await holder.wait()
        await store.close()


async def test_metrics_show_the_lock_waited_for_and_held(tmp_path: Path) -> None:
    server = await start_server("serve", "--store", f"sqlite:///{tmp_path / 'tasks.db'}")
    try:
        async with aiohttp.ClientSession() as http:
            for _ in range(3):
                async with http.post(server.url + "/message:send", json={"message": {
                        "messageId": str(uuid.uuid4()), "role": "ROLE_USER",
                        "parts": [{"text": "hi"}]}}) as resp:
                    assert resp.status == 200
            async with http.get(server.url + "/metrics") as resp:
                text = await resp.text()
        lock = r'a2a_store_write_lock_seconds_total\{phase="%s",shard="0"\} (\S+)'
        held, waited = (re.search(lock % phase, text) for phase in ("held", "waited"))
        assert held and float(held.group(1)) > 0, text
        assert waited and float(waited.group(1)) >= 0
    finally:
        reap(server.proc)
    assert (tmp_path / "tasks.db.write-lock").exists()
