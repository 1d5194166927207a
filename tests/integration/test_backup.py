"""`a2a-grpc backup` of the SQLite store while a server writes to it: the
copy holds every task acknowledged before the backup began, a server
started on it answers them, and resumes a stream by Last-Event-ID from the
event log it restored; a PostgreSQL store is pointed to its own tools."""

from __future__ import annotations

import asyncio
import re
import shutil
import sqlite3
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import aiohttp

from tests.bindings import parse_sse
from tests.processes import ROOT, reap, start_server

HEADERS = {"A2A-Version": "1.0"}


def message(text: str) -> dict[str, Any]:
    return {"message": {"messageId": uuid.uuid4().hex, "role": "ROLE_USER",
                        "parts": [{"text": text}]}}


class Acked:
    """The acknowledged tasks, each with when its answer came; `reached(n)` is
    set once there are n."""

    def __init__(self) -> None:
        self.tasks: list[tuple[float, str]] = []
        self._waiting: list[tuple[int, asyncio.Event]] = []

    def add(self, task_id: str) -> None:
        self.tasks.append((time.monotonic(), task_id))
        for n, event in self._waiting:
            if len(self.tasks) >= n:
                event.set()

    def reached(self, n: int) -> asyncio.Event:
        event = asyncio.Event()
        if len(self.tasks) >= n:
            event.set()
        self._waiting.append((n, event))
        return event


async def load(http: aiohttp.ClientSession, base: str, acked: Acked,
               stop: asyncio.Event) -> None:
    """Sends until told to stop."""
    while not stop.is_set():
        async with http.post(base + "/message:send", json=message("hello")) as resp:
            assert resp.status == 200, await resp.text()
            acked.add((await resp.json())["task"]["id"])


async def test_a_backup_under_load_restores_tasks_and_resumes_streams(tmp_path: Path) -> None:
    store, copy = tmp_path / "tasks.db", tmp_path / "backup.db"
    server = await start_server("serve", "--store", f"sqlite:///{store}", "--grace", "0")
    acked = Acked()
    try:
        async with aiohttp.ClientSession(headers=HEADERS) as http:
            async with http.post(server.url + "/message:stream",
                                 json=message("stream 30")) as resp:
                streamed, _ = parse_sse(await resp.text())
            stop = asyncio.Event()
            loaders = [asyncio.create_task(load(http, server.url, acked, stop))
                       for _ in range(4)]
            await acked.reached(50).wait()  # under way
            began = time.monotonic()
            done = await asyncio.to_thread(
                subprocess.run, [sys.executable, "-m", "a2a_grpc", "backup", "--store",
                                 f"sqlite:///{store}", str(copy)],
                cwd=ROOT, capture_output=True, text=True, timeout=120)
            await acked.reached(len(acked.tasks) + 20).wait()  # the server kept answering
            stop.set()
            await asyncio.gather(*loaders)
    finally:
        reap(server.proc)
    assert done.returncode == 0, done.stderr
    assert "100%" in done.stderr and "tasks" in done.stdout
    # the pages the progress counted last are those the summary says
    last = re.findall(r"\((\d+)/(\d+) pages\)", done.stderr)[-1]
    assert last[0] == last[1] and f" {last[0]} pages," in done.stdout, (done.stderr, done.stdout)
    before = [task for at, task in acked.tasks if at < began]
    assert len(before) >= 50
    restored = tmp_path / "restored.db"
    shutil.copy(copy, restored)
    again = await start_server("serve", "--store", f"sqlite:///{restored}")
    try:
        async with aiohttp.ClientSession(headers=HEADERS) as http:
            for task_id in before:
                async with http.get(f"{again.url}/tasks/{task_id}") as resp:
                    assert resp.status == 200, (task_id, await resp.text())
            task_id = streamed[0].data["task"]["id"]
            async with http.get(f"{again.url}/tasks/{task_id}:subscribe",
                                headers={"Last-Event-ID": "5"}) as resp:
                resumed, _ = parse_sse(await resp.text())
    finally:
        reap(again.proc)
    assert [e.id for e in resumed] == [e.id for e in streamed[5:]]
    assert [e.data for e in resumed] == [e.data for e in streamed[5:]]
    assert resumed[-1].data["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"


def test_backup_refuses_what_it_cannot_copy(tmp_path: Path) -> None:
    def backup(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "a2a_grpc", "backup", *args], cwd=ROOT,
                              capture_output=True, text=True, timeout=60)

    postgres = backup("--store", "postgresql://u@h/db", str(tmp_path / "x.db"))
    assert postgres.returncode == 1 and "pg_dump" in postgres.stderr
    missing = backup("--store", f"sqlite:///{tmp_path / 'none.db'}", str(tmp_path / "x.db"))
    assert missing.returncode == 1 and "no SQLite store" in missing.stderr
    (tmp_path / "same.db").write_bytes(b"")
    same = backup("--store", f"sqlite:///{tmp_path / 'same.db'}", str(tmp_path / "same.db"))
    assert same.returncode == 1 and "another file" in same.stderr
    assert not (tmp_path / "x.db").exists()
    nowhere = tmp_path / "no" / "such" / "x.db"
    store = tmp_path / "store.db"
    made = subprocess.run([sys.executable, "-m", "a2a_grpc", "restore", "--store",
                           f"sqlite:///{store}", str(tmp_path / "none.db")], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert made.returncode == 2 and "no backup at" in made.stderr, made.stderr
    sqlite3.connect(store).close()  # an empty SQLite file: not a store of ours
    elsewhere = backup("--store", f"sqlite:///{store}", str(nowhere))
    assert elsewhere.returncode == 1 and f"no folder {nowhere.parent}" in elsewhere.stderr, \
        elsewhere.stderr


def test_a_restore_that_fails_leaves_nothing_behind(tmp_path: Path) -> None:
    """A file that is not a backup, or a SQLite file that is not ours: said,
    naming the file, and no STORE.partial left."""
    junk, foreign = tmp_path / "notes.db", tmp_path / "other.db"
    junk.write_text("not a database, " * 100)
    with sqlite3.connect(foreign) as conn:
        conn.execute("CREATE TABLE things (a)")
    store = tmp_path / "store" / "tasks.db"
    store.parent.mkdir()
    for source, says in ((junk, "file is not a database"), (foreign, "not an a2a-grpc store")):
        done = subprocess.run([sys.executable, "-m", "a2a_grpc", "restore", "--store",
                               f"sqlite:///{store}", str(source)], cwd=ROOT,
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 2 and says in done.stderr and str(source.name) in done.stderr, \
            done.stderr
        assert "Traceback" not in done.stderr
        assert list(store.parent.iterdir()) == [], list(store.parent.iterdir())
