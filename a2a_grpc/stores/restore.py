"""A backup put back whole: `a2a-grpc restore`, and the check that keeps a
store from being served beside shards its backup does not have.

`a2a-grpc backup` marks each file it writes with the backup's id, the
shard it is and how many shards the backup has (`mark`). A server opening a
store whose PATH carries that mark (`check_restored`, before any shard is
opened or made) serves it only if every shard beside it carries the same
mark and none is missing: a shard a later `serve --workers` made, left
beside a backup copied by hand, would otherwise mix tasks made after the
backup into it. Once the set is whole the marks are dropped, so the shards
a later `--workers` adds are the store's own.

`restore` does the whole put-back: it refuses a store a server has open,
removes the store's -wal and -shm files, copies each of the backup's files
into place (checked, then renamed over the old), and removes the store's
shards the backup does not have.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

from a2a_grpc.stores.shard_files import shard_path, shards_on_disk

MARK = "a2a_backup"


def mark(conn: sqlite3.Connection, backup_id: str, shard: int, shards: int) -> None:
    """Mark a copy as file `shard` of `shards` of backup `backup_id`."""
    conn.execute(f"DROP TABLE IF EXISTS {MARK}")  # a copy of a copy: this backup's
    conn.execute(f"CREATE TABLE {MARK} (id TEXT NOT NULL, shard INTEGER NOT NULL, "
                 "shards INTEGER NOT NULL)")
    conn.execute(f"INSERT INTO {MARK} VALUES (?, ?, ?)", (backup_id, shard, shards))
    conn.commit()


def mark_of(path: Path) -> tuple[str, int, int] | None:
    """The backup mark of the SQLite file at `path`, if it has one (none for a
    file that is not a database: opening the store says so, with what to check)."""
    conn = sqlite3.connect(path, timeout=30)
    try:
        if conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
                        (MARK,)).fetchone() is None:
            return None
        row = conn.execute(f"SELECT id, shard, shards FROM {MARK}").fetchone()
        return None if row is None else (str(row[0]), int(row[1]), int(row[2]))
    except sqlite3.DatabaseError:
        return None
    finally:
        conn.close()


def check_restored(path: Path) -> None:
    """ValueError if the store at `path` was put back from a backup beside shards
    that are not the backup's; drops the marks once the set is whole."""
    if not path.is_file():
        return
    first = mark_of(path)
    if first is None:
        return
    backup_id, _, count = first
    found = max(count, shards_on_disk(path))
    strangers = [shard_path(path, k) for k in range(1, found)
                 if not shard_path(path, k).is_file() or k >= count
                 or (mark_of(shard_path(path, k)) or ("",))[0] != backup_id]
    if strangers and mark_of(path) is not None:  # not a replica dropping the marks meanwhile
        names = ", ".join(p.name for p in strangers)
        raise ValueError(
            f"{path} is a backup of {count} file(s), but {names} beside it "
            f"{'is' if len(strangers) == 1 else 'are'} not from that backup (made after it, "
            "or missing): put back every file of the backup and remove the others, or let "
            "`a2a-grpc restore BACKUP --store URL` do it")
    for k in range(count):  # shard 0 first: a replica that still saw its mark looks again
        conn = sqlite3.connect(shard_path(path, k), timeout=30)
        try:
            conn.execute(f"DROP TABLE IF EXISTS {MARK}")
            conn.commit()
        finally:
            conn.close()


def in_use(path: Path) -> bool:
    """Whether a process has the SQLite file at `path` open: in WAL mode every
    connection holds a shared lock, so an exclusive one is refused."""
    conn = sqlite3.connect(path, timeout=0, isolation_level=None)
    try:
        conn.execute("PRAGMA locking_mode = EXCLUSIVE")
        conn.execute("BEGIN EXCLUSIVE")
        conn.execute("ROLLBACK")
        return False
    except sqlite3.OperationalError:
        return True
    finally:
        conn.close()


def restore(source: Path, target: Path,
            copy: Callable[[Path, Path], int]) -> tuple[int, list[Path]]:
    """Put the backup at `source` (with its shards) at `target`; `copy(from, to)`
    copies one file whole and says how many tasks it holds. Returns the tasks
    restored and the store's shards removed."""
    if not source.is_file():
        raise ValueError(f"no backup at {source}")
    if source.resolve() == target.resolve():
        raise ValueError("the backup and the store are the same file")
    if not target.parent.is_dir():
        raise ValueError(f"no folder {target.parent} for the store")
    marked = mark_of(source)
    count = marked[2] if marked is not None else shards_on_disk(source)
    absent = [shard_path(source, k).name for k in range(count)
              if not shard_path(source, k).is_file()]
    if absent:
        raise ValueError(f"the backup lacks {', '.join(absent)}")
    present = [shard_path(target, k) for k in range(shards_on_disk(target))
               if shard_path(target, k).is_file()]
    busy = [p.name for p in present if in_use(p)]
    if busy:
        raise RuntimeError(f"a server has {', '.join(busy)} open: stop it, then restore")
    for k in range(max(count, shards_on_disk(target))):
        for suffix in ("-wal", "-shm"):  # the old files' log: not the backup's
            shard_path(target, k).with_name(shard_path(target, k).name + suffix).unlink(
                missing_ok=True)
    tasks = sum(copy(shard_path(source, k), shard_path(target, k)) for k in range(count))
    removed = [p for p in present if p not in {shard_path(target, k) for k in range(count)}]
    for p in removed:
        p.unlink()
    return tasks, removed
