"""Putting a backup back (stores/restore.py): `a2a-grpc restore` replaces the
store with the backup, every shard of it, and removes the shards made after
it; a backup copied into place by hand beside such a shard is refused, not
served mixed with tasks made after the backup; a store a server has open is
not restored under it."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from a2a_grpc.core import states
from a2a_grpc.generated import a2a_pb2 as pb
from a2a_grpc.stores import Scope, TaskStore, open_store
from a2a_grpc.stores.restore import mark_of
from a2a_grpc.stores.shard_files import shards_on_disk
from tests.integration.test_shards import new_task, query
from tests.processes import ROOT

ME = Scope("", "alice")


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "a2a_grpc", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


async def add(store: TaskStore, n: int) -> str:
    t = new_task(store, n, states.COMPLETED)
    await store.append(ME, t, 1, pb.StreamResponse(task=t))
    return t.id


async def ids(url: str) -> set[str]:
    store = await open_store(url)
    try:
        return {t.id for t in (await store.list_tasks(query(100)))[0]}
    finally:
        await store.close()


@pytest.fixture
async def backed_up(tmp_path: Path) -> tuple[str, Path, set[str], str]:
    """A one-process store backed up with two tasks, then served by `--workers 2`,
    whose shard 1 has a task made after the backup: (url, backup, its ids, the later id)."""
    url = f"sqlite:///{tmp_path / 'tasks.db'}"
    single = await open_store(url)
    before = {await add(single, 0), await add(single, 1)}
    await single.close()
    copy = tmp_path / "saved" / "backup.db"
    copy.parent.mkdir()
    done = await asyncio.to_thread(cli, "backup", "--store", url, str(copy))
    assert done.returncode == 0, done.stderr
    assert "a2a-grpc restore --store URL" in done.stdout
    worker = await open_store(url, shard=1, shards=2)
    later = await add(worker, 2)
    await worker.close()
    assert shards_on_disk(tmp_path / "tasks.db") == 2
    return url, copy, before, later


async def test_restore_puts_back_the_backup_and_removes_newer_shards(
        backed_up: tuple[str, Path, set[str], str], tmp_path: Path) -> None:
    url, copy, before, _ = backed_up
    done = await asyncio.to_thread(cli, "restore", "--store", url, str(copy))
    assert done.returncode == 0, done.stderr
    assert "2 tasks restored" in done.stdout and "tasks.db.shard-1" in done.stdout
    assert not (tmp_path / "tasks.db.shard-1").exists()
    assert await ids(url) == before
    assert mark_of(tmp_path / "tasks.db") is None  # served once: its marks are gone
    worker = await open_store(url, shard=1, shards=2)  # so a new shard is the store's
    await add(worker, 3)
    await worker.close()
    assert len(await ids(url)) == 3


async def test_a_backup_copied_beside_a_newer_shard_is_refused(
        backed_up: tuple[str, Path, set[str], str], tmp_path: Path) -> None:
    url, copy, before, later = backed_up
    store = tmp_path / "tasks.db"
    for suffix in ("-wal", "-shm"):
        store.with_name(store.name + suffix).unlink(missing_ok=True)
    shutil.copyfile(copy, store)  # as the docs of the release before said
    with pytest.raises(ValueError, match=r"tasks\.db\.shard-1 beside it is not from that"):
        await open_store(url)
    done = await asyncio.to_thread(cli, "serve", "--store", url, "--http-port", "0",
                                   "--grpc-port", "0")
    assert done.returncode == 2 and "a2a-grpc restore" in done.stderr, done.stderr
    (tmp_path / "tasks.db.shard-1").unlink()  # as the message says
    assert await ids(url) == before and later not in before


async def test_a_shard_of_the_backup_left_out_is_refused(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'tasks.db'}"
    supervisor = await open_store(url, shards=2)
    await supervisor.close()
    for k in range(2):
        worker = await open_store(url, shard=k)
        await add(worker, k)
        await worker.close()
    copy = tmp_path / "backup.db"
    assert (await asyncio.to_thread(cli, "backup", "--store", url, str(copy))).returncode == 0
    assert mark_of(tmp_path / "backup.db.shard-1") is not None
    (tmp_path / "backup.db.shard-1").unlink()
    with pytest.raises(ValueError, match=r"backup\.db\.shard-1"):
        await open_store(f"sqlite:///{copy}")
    done = await asyncio.to_thread(cli, "restore", "--store", url, str(copy))
    assert done.returncode == 2 and "the backup lacks backup.db.shard-1" in done.stderr


async def test_a_store_in_use_is_not_restored(
        backed_up: tuple[str, Path, set[str], str], tmp_path: Path) -> None:
    url, copy, _, later = backed_up
    serving = await open_store(url)
    try:
        done = await asyncio.to_thread(cli, "restore", "--store", url, str(copy))
        assert done.returncode == 1 and "stop it, then restore" in done.stderr, done.stderr
        assert later in {t.id for t in (await serving.list_tasks(query(100)))[0]}
    finally:
        await serving.close()
    assert (tmp_path / "tasks.db.shard-1").exists()


def test_restore_says_what_it_needs(tmp_path: Path) -> None:
    done = cli("restore", "--store", "postgresql://localhost/db", str(tmp_path / "b.db"))
    assert done.returncode == 2 and "PostgreSQL: its own tools" in done.stderr
    done = cli("restore", "--store", f"sqlite:///{tmp_path / 'tasks.db'}",
               str(tmp_path / "nothing.db"))
    assert done.returncode == 2 and "no backup at" in done.stderr
