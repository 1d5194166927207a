"""`a2a-grpc backup`: a copy of the SQLite store, consistent while the
server writes to it.

SQLite's online backup copies the database page by page from one read
transaction's snapshot (WAL mode lets the server keep writing meanwhile);
what was committed when the copy began is in it, whole, and nothing after.
The copy is written beside OUT and renamed over it once checked, so OUT is
never half a database. PostgreSQL has its own tools (pg_dump, base backups
with WAL archiving): docs/durability.md.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

PAGES = 1024  # pages per step: the server's writers wait at most one step


@dataclass(frozen=True, slots=True)
class Copied:
    path: Path
    pages: int
    tasks: int
    schema: int


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
    """Copy the store at `url` to `out`; `progress(copied, total)` pages as it goes."""
    source = sqlite_path(url)
    if out.resolve() == source.resolve():
        raise ValueError("the backup must go to another file than the store")
    partial = out.with_name(out.name + ".partial")
    partial.unlink(missing_ok=True)
    src = sqlite3.connect(source, timeout=30)
    try:
        dst = sqlite3.connect(partial)
        try:
            def step(_: int, remaining: int, total: int) -> None:
                if progress is not None:
                    progress(total - remaining, total)

            src.backup(dst, pages=PAGES, progress=step)
            checked = dst.execute("PRAGMA integrity_check").fetchone()[0]
            if checked != "ok":
                raise RuntimeError(f"the copy failed its integrity check: {checked}")
            pages = int(dst.execute("PRAGMA page_count").fetchone()[0])
            tasks = int(dst.execute("SELECT count(*) FROM a2a_tasks").fetchone()[0])
            schema = int(dst.execute("SELECT version FROM a2a_schema").fetchone()[0])
        finally:
            dst.close()
    finally:
        src.close()
    os.replace(partial, out)
    return Copied(out, pages, tasks, schema)
