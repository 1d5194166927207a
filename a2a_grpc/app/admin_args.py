"""The arguments of the commands that look after a server's files and keys
(admin.py runs them), declared without loading the stores: `a2a-grpc
--help` and the client commands name these commands and load none of it."""

from __future__ import annotations

import argparse
from pathlib import Path

ADMIN = ("backup", "restore", "dead-letters", "proto", "push-secret-key", "passwd")


def add_admin(sub: argparse._SubParsersAction, declared: bool = True) -> None:  # type: ignore[type-arg]
    """The commands, named with their help; `declared`: with their arguments
    too (which read the stores' default: a command line naming none of
    these loads no store module)."""
    d = sub.add_parser("dead-letters",
                       help="list push notifications that were given up on (newest last)")
    bk = sub.add_parser("backup", help="copy the SQLite store to a file, consistent while "
                        "the server runs (PostgreSQL: its own tools)")
    rs = sub.add_parser("restore", help="put a backup back at the store's path, with its "
                        "shards, removing the store's newer ones (the server stopped)")
    pr = sub.add_parser("proto", help="write the .proto files (with the google/api and "
                        "google/rpc ones they need) for stubs in another language")
    sub.add_parser("push-secret-key", help="a new key for serve --push-secret-keys (a line "
                   "of its FILE)")
    pw = sub.add_parser("passwd", help="a line for serve --basic-users: USER:HASH (the "
                        "password is read from the terminal, or from stdin when piped)")
    if not declared:
        return
    from a2a_grpc.stores import DEFAULT_URL

    d.add_argument("--store", default=DEFAULT_URL, metavar="URL", help="the server's --store")
    d.add_argument("--limit", type=int, default=100)
    bk.add_argument("--store", default=DEFAULT_URL, metavar="URL", help="the server's --store")
    bk.add_argument("out", type=Path, help="the copy (written whole, or not at all)")
    rs.add_argument("--store", default=DEFAULT_URL, metavar="URL", help="the server's --store")
    rs.add_argument("backup", type=Path, help="the file `a2a-grpc backup` wrote")
    pr.add_argument("--out", type=Path, required=True, metavar="DIR",
                    help="where to write them; then e.g. protoc -I DIR --go_out=... "
                         "DIR/a2a.proto")
    pw.add_argument("user")
