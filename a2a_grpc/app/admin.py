"""The commands that look after a server's files and keys rather than serve:
`backup` and `restore` of the SQLite store, `dead-letters`, `proto`,
`push-secret-key` and `passwd` (their arguments: admin_args.py)."""

from __future__ import annotations

import argparse
import asyncio
import getpass
import json
import sqlite3
import sys
from pathlib import Path

from a2a_grpc.app.proto_files import write as write_protos
from a2a_grpc.auth.basic import hash_password
from a2a_grpc.push.secrets import SecretBox
from a2a_grpc.stores import StoreOpenError, open_store
from a2a_grpc.stores.backup import backup, copy_file
from a2a_grpc.stores.restore import restore


def run_admin(args: argparse.Namespace) -> int:
    if args.command == "passwd":
        return _passwd(args.user)
    if args.command == "proto":
        for path in write_protos(args.out):
            print(path)
        return 0
    if args.command == "push-secret-key":
        print(SecretBox.new_key())
        return 0
    if args.command == "backup":
        return _backup(args.store, args.out)
    if args.command == "restore":
        return _restore(args.backup, args.store)
    return asyncio.run(_dead_letters(args.store, args.limit))


async def _dead_letters(url: str, limit: int) -> int:
    try:
        store = await open_store(url)
    except (StoreOpenError, ValueError) as exc:
        print(f"a2a-grpc: {exc}", file=sys.stderr)
        return 1
    try:
        for d in await store.dead_letters(limit):
            print(json.dumps({"tenant": d.scope.tenant, "owner": d.scope.owner,
                              "taskId": d.task_id, "configId": d.config_id, "event": d.seq,
                              "attempts": d.attempts, "error": d.last_error}))
    finally:
        await store.close()
    return 0


def _backup(url: str, out: Path) -> int:
    shown = -1

    def progress(copied: int, total: int) -> None:
        nonlocal shown
        percent = copied * 100 // max(total, 1)
        if percent // 10 != shown // 10:  # every 10%
            shown = percent
            print(f"a2a-grpc backup: {percent}% ({copied}/{total} pages)", file=sys.stderr)

    try:
        made = backup(url, out, progress)
    except (ValueError, RuntimeError, sqlite3.Error, OSError) as exc:
        print(f"a2a-grpc backup: {exc}", file=sys.stderr)
        return 1
    files = "this file" if made.shards == 1 else (
        f"this file and its {made.shards - 1} shards ({made.path.name}.shard-K, each renamed "
        "to the store's name with the same suffix)")
    print(f"{made.path}: {made.tasks} tasks, {made.pages} pages, schema version {made.schema} "
          f"in {files}; restore it with the server stopped: a2a-grpc restore --store URL "
          f"{made.path}")
    return 0


def _restore(source: Path, url: str) -> int:
    if not url.startswith("sqlite:///") or url == "sqlite:///":
        print(f"a2a-grpc restore: --store {url!r}: restore puts back a sqlite:///PATH store "
              "(PostgreSQL: its own tools, docs/durability.md)", file=sys.stderr)
        return 2
    target = Path(url.removeprefix("sqlite:///"))
    try:
        tasks, removed = restore(source, target, copy_file)
    except ValueError as exc:
        print(f"a2a-grpc restore: {exc}", file=sys.stderr)
        return 2
    except (RuntimeError, sqlite3.Error, OSError) as exc:
        print(f"a2a-grpc restore: {exc}", file=sys.stderr)
        return 1
    gone = f"; removed {', '.join(p.name for p in removed)} (not in the backup)" if removed else ""
    print(f"{target}: {tasks} tasks restored from {source}{gone}")
    return 0


def _passwd(user: str) -> int:
    if not user or ":" in user:
        print("a2a-grpc passwd: a user name is not empty and has no ':'", file=sys.stderr)
        return 2
    if sys.stdin.isatty():
        password = getpass.getpass(f"password for {user}: ")
        if getpass.getpass("again: ") != password:
            print("a2a-grpc passwd: the two passwords differ", file=sys.stderr)
            return 2
    else:
        password = sys.stdin.readline().rstrip("\r\n")
    if not password:
        print("a2a-grpc passwd: empty password", file=sys.stderr)
        return 2
    print(f"{user}:{hash_password(password)}")
    return 0
