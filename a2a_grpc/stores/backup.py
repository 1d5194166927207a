"""`a2a-grpc backup`: a copy of the SQLite store, consistent while the
server writes to it.

SQLite's online backup copies the database page by page from one read
transaction's snapshot (WAL mode lets the server keep writing meanwhile);
what was committed when the copy began is in it, whole, and nothing after.
The copy is written beside OUT and renamed over it once checked, so OUT is
never half a database. A store in shards (`serve --workers`) is copied
shard by shard, each to OUT's name with the shard's suffix (OUT.shard-K);
each copy is marked as a file of this backup (restore.py), so that a server
refuses it beside shards that are not.
PostgreSQL has its own tools (pg_dump, base backups with WAL archiving):
docs/durability.md.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from a2a_grpc.stores.restore import mark
from a2a_grpc.stores.shard_files import shard_path, shards_on_disk

PAGES = 1024  # pages per step: the server's writers wait at most one step


@dataclass(frozen=True, slots=True)
class Copied:
    path: Path
    pages: int
    tasks: int
    schema: int
    shards: int = 1


def sqlite_path(url: str) -> Path:
    if url.startswith("postgresql://") or url.startswith("postgres://"):
        raise ValueError("a PostgreSQL store is backed up with PostgreSQL's tools: pg_dump "
                         "(a logical copy) or a base backup with WAL archiving (see "
                         "docs/durability.md)")
    if not url.startswith("sqlite:///") or url == "sqlite:///":
        raise ValueError(f"--store {url!r}: backup copies a sqlite:///PATH store")
    path = Path(url.removeprefix("sqlite:///"))
    if not path.is_file():
        raise ValueError(f"no SQLite store at {path}")
    return path


def backup(url: str, out: Path, progress: Callable[[int, int], None] | None = None) -> Copied:
    """Copy the store at `url` to `out`, and each of its shards to the same name
    beside it (shards.py); `progress(copied, total)` pages as it goes. Each
    file is copied from a snapshot of its own, all taken after the call began."""
    source = sqlite_path(url)
    if out.resolve() == source.resolve():
        raise ValueError("the backup must go to another file than the store")
    count = shards_on_disk(source)
    sizes = [_pages(shard_path(source, shard)) for shard in range(count)]
    backup_id = uuid.uuid4().hex
    done: list[Copied] = []
    for shard in range(count):
        before = sum(c.pages for c in done)

        def step(copied: int, total: int, before: int = before, shard: int = shard) -> None:
            if progress is not None:  # a file may grow while it is copied
                progress(before + copied, before + total + sum(sizes[shard + 1:]))

        def marked(conn: sqlite3.Connection, shard: int = shard) -> None:
            mark(conn, backup_id, shard, count)

        done.append(_copy(shard_path(source, shard), shard_path(out, shard), step, marked))
    for stale in range(count, shards_on_disk(out)):  # an older copy's: not this store's
        shard_path(out, stale).unlink(missing_ok=True)
    return Copied(out, sum(c.pages for c in done), sum(c.tasks for c in done), done[0].schema,
                  count)


def _pages(path: Path) -> int:
    conn = sqlite3.connect(path, timeout=30)
    try:
        return int(conn.execute("PRAGMA page_count").fetchone()[0])
    finally:
        conn.close()


def copy_file(source: Path, out: Path) -> int:
    """One SQLite file copied whole to `out` (`a2a-grpc restore`): its tasks."""
    return _copy(source, out, lambda copied, total: None).tasks


def _copy(source: Path, out: Path, progress: Callable[[int, int], None],
          finish: Callable[[sqlite3.Connection], None] | None = None) -> Copied:
    """`source` copied to `out` whole, or nothing written: the copy is made
    beside it (OUT.partial), and removed if anything fails. Its pages are
    the source's, as the progress counted them (the backup's mark adds one)."""
    if not out.parent.is_dir():
        raise ValueError(f"there is no folder {out.parent} for {out.name}")
    partial = out.with_name(out.name + ".partial")
    partial.unlink(missing_ok=True)
    copied = [0]

    def step(_: int, remaining: int, total: int) -> None:
        copied[0] = total
        progress(total - remaining, total)

    try:
        with contextlib.closing(sqlite3.connect(source, timeout=30)) as src, \
                contextlib.closing(sqlite3.connect(partial)) as dst:
            try:
                src.backup(dst, pages=PAGES, progress=step)
            except sqlite3.DatabaseError as exc:
                raise ValueError(f"cannot copy {source}: {exc}") from None
            tasks, schema = _ours(dst, source)
            if finish is not None:
                finish(dst)
            checked = dst.execute("PRAGMA integrity_check").fetchone()[0]
            if checked != "ok":
                raise RuntimeError(f"the copy of {source} failed its integrity check: {checked}")
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    os.replace(partial, out)
    return Copied(out, copied[0], tasks, schema)


def _ours(copy: sqlite3.Connection, source: Path) -> tuple[int, int]:
    """The tasks and the schema version of a copy of our store; ValueError,
    naming `source`, for a file that is not one."""
    try:
        tasks = int(copy.execute("SELECT count(*) FROM a2a_tasks").fetchone()[0])
        schema = int(copy.execute("SELECT version FROM a2a_schema").fetchone()[0])
    except sqlite3.DatabaseError as exc:
        raise ValueError(f"{source} is not an a2a-grpc store ({exc})") from None
    return tasks, schema
