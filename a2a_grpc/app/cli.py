"""`a2a-grpc` command line: `serve` (settings.py declares its flags), `bridge`,
the client verbs, `dead-letters` and `passwd`."""

from __future__ import annotations

import argparse
import asyncio
import getpass
import json
import logging
import sqlite3
import sys
from collections.abc import Awaitable, Coroutine
from pathlib import Path
from typing import Any

from a2a_grpc.agent import AgentExecutor
from a2a_grpc.app import process
from a2a_grpc.app.carrier import carry
from a2a_grpc.app.loading import load_agent, load_card, load_hosted, with_card
from a2a_grpc.app.options import http_options
from a2a_grpc.app.proto_files import write as write_protos
from a2a_grpc.app.serve import gateway, serve
from a2a_grpc.app.settings import GROUPS, ServeSettings
from a2a_grpc.app.settings_load import add_flags, load
from a2a_grpc.app.workers import supervise
from a2a_grpc.auth.basic import hash_password
from a2a_grpc.client.commands import VERBS, add_commands, main_for
from a2a_grpc.core.extras import MissingExtraError
from a2a_grpc.core.version import describe
from a2a_grpc.demos.demo import DemoAgent
from a2a_grpc.execution.hosted import Hosted
from a2a_grpc.grpc_edge.server import PortInUseError
from a2a_grpc.observe import logs
from a2a_grpc.push.secrets import SecretBox
from a2a_grpc.stores import DEFAULT_URL, StoreInUseError, open_store
from a2a_grpc.stores.backup import backup

# What `bridge` shares with `serve`: the HTTP side, TLS, the process, the logs.
BRIDGE_NETWORK = ("host", "http_port", "public_url", "keepalive", "max_body", "grace", "loop",
                  "tls_cert", "tls_key", "tls_client_ca", "tls_require_client_cert")


async def _dead_letters(url: str, limit: int) -> int:
    try:
        store = await open_store(url)
    except (OSError, RuntimeError, ValueError) as exc:
        print(f"a2a-grpc: {exc}; check --store", file=sys.stderr)
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
    print(f"{made.path}: {made.tasks} tasks, {made.pages} pages, schema version {made.schema}; "
          f"restore it by stopping the server and putting {files} at its --store path "
          f"(their -wal and -shm files removed)")
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


def run_loop(main: Coroutine[Any, Any, None], loop: str) -> None:
    """Run `main` on uvloop (measured faster: docs/benchmarks.md) or asyncio's loop."""
    if loop != "asyncio":
        try:
            import uvloop
        except ImportError:
            if loop == "uvloop":
                main.close()
                raise SystemExit("a2a-grpc: uvloop is not installed: pip install uvloop, "
                                 "or use --loop asyncio") from None
        else:
            logging.getLogger("a2a_grpc").info("event loop: uvloop")
            uvloop.run(main)
            return
    logging.getLogger("a2a_grpc").info("event loop: asyncio")
    asyncio.run(main)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="a2a-grpc", description="A2A 1.0 server, gRPC first.")
    parser.add_argument("--version", action="version", version=describe(),
                        help="print the version and the A2A protocol versions served")
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("serve", help="serve an agent (the built-in demo agent by default)",
                       description="Each flag may also come from the environment "
                       "(A2A_GRPC_ and the flag in capitals, e.g. A2A_GRPC_GRPC_PORT) or from "
                       "--config FILE (TOML: a table per section below, [network], "
                       "[store], [security], [push], [observability], [limits] and [agent], "
                       "its keys the settings' names, as the flags with _, and [store] url "
                       "for --store); a flag wins over the environment, which wins over "
                       "the file.")
    s.add_argument("--config", type=Path, metavar="FILE",
                   help="settings from this TOML file (see above)")
    add_flags(s, *GROUPS)
    b = sub.add_parser("bridge", help="JSON-RPC and REST in front of any A2A gRPC server")
    b.add_argument("--upstream", required=True, metavar="HOST:PORT",
                   help="the A2A gRPC server to stand in front of")
    b.add_argument("--card", type=Path, metavar="FILE",
                   help="agent card JSON to serve (interfaces are filled in)")
    b.add_argument("--forward-header", action="append", default=[], metavar="NAME",
                   help="pass this header (or query parameter) on to the upstream as "
                        "metadata, e.g. the card's API key name; Authorization, Cookie and "
                        "X-API-Key always are (repeatable)")
    add_flags(b, "network", only=BRIDGE_NETWORK)
    add_flags(b, "observability", only=("log_level", "log_format"))
    add_commands(sub)
    d = sub.add_parser("dead-letters",
                       help="list push notifications that were given up on (newest last)")
    d.add_argument("--store", default=DEFAULT_URL, metavar="URL", help="the server's --store")
    d.add_argument("--limit", type=int, default=100)
    bk = sub.add_parser("backup", help="copy the SQLite store to a file, consistent while "
                        "the server runs (PostgreSQL: its own tools)")
    bk.add_argument("--store", default=DEFAULT_URL, metavar="URL", help="the server's --store")
    bk.add_argument("out", type=Path, help="the copy (written whole, or not at all)")
    pr = sub.add_parser("proto", help="write the .proto files (with the google/api and "
                        "google/rpc ones they need) for stubs in another language")
    pr.add_argument("--out", type=Path, required=True, metavar="DIR",
                    help="where to write them; then e.g. protoc -I DIR --go_out=... "
                         "DIR/a2a.proto")
    sub.add_parser("push-secret-key", help="a new key for serve --push-secret-keys (a line "
                   "of its FILE)")
    pw = sub.add_parser("passwd", help="a line for serve --basic-users: USER:HASH (the "
                        "password is read from the terminal, or from stdin when piped)")
    pw.add_argument("user")
    return parser


async def _serve_loaded(loaded: AgentExecutor | Awaitable[AgentExecutor],
                        settings: ServeSettings) -> None:
    """`serve`, once an agent made by an async factory is made (in the loop)."""
    agent = loaded if isinstance(loaded, AgentExecutor) else await loaded
    await serve(with_card(agent, settings.agent.card), settings)


async def _serve_hosted(loaded: Awaitable[dict[str, AgentExecutor]],
                        settings: ServeSettings) -> None:
    """`serve --host-agent ...`: several agents on one server."""
    await serve(Hosted(await loaded), settings)


def serve_settings(argv: list[str]) -> ServeSettings:
    """The settings of a `serve` command line (what the carried app reads again)."""
    args = _parser().parse_args(argv)
    return load(args, getattr(args, "config", None))


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command == "passwd":
        return _passwd(args.user)
    if args.command == "proto":
        for path in write_protos(args.out):
            print(path)
        return 0
    if args.command == "backup":
        return _backup(args.store, args.out)
    if args.command == "dead-letters":
        return asyncio.run(_dead_letters(args.store, args.limit))
    try:
        if args.command == "push-secret-key":
            print(SecretBox.new_key())
            return 0
        if args.command in VERBS:
            return main_for(args)
        settings = load(args, getattr(args, "config", None))
        logs.setup(settings.observability.log_level, settings.observability.log_format,
                   process.worker())
        net = settings.network
        if args.command == "serve" and net.workers < 1:
            raise ValueError("--workers must be 1 or more")
        if args.command == "serve" and settings.agent.hosted and settings.agent.agent:
            raise ValueError("--agent and --host-agent: name every agent with "
                             "--host-agent NAME=MODULE:ATTR")
        if args.command == "serve" and settings.agent.hosted and settings.agent.card:
            raise ValueError("--card is the card of the one agent --agent serves; hosted "
                             "agents bring their own")
        if args.command == "serve" and settings.agent.card:
            load_card(settings.agent.card)  # a bad card is said before anything starts
        if process.worker() is not None:
            process.stop_with_parent()
        if args.command == "serve" and net.workers > 1 and process.worker() is None:
            return asyncio.run(supervise(sys.argv[1:] if argv is None else argv, settings))
        if args.command == "serve" and net.grpc_carrier == "pyvoy":
            return asyncio.run(carry(sys.argv[1:] if argv is None else argv, settings))
        if args.command == "serve" and settings.agent.hosted:
            run_loop(_serve_hosted(load_hosted(settings.agent.hosted), settings), net.loop)
        elif args.command == "serve":
            name = settings.agent.agent
            loaded = load_agent(name) if name else DemoAgent()
            run_loop(_serve_loaded(loaded, settings), net.loop)
        else:
            run_loop(gateway(args.upstream, http_options(net), args.card, net.grace,
                             tuple(args.forward_header)), net.loop)
    except ValueError as exc:
        parser.error(str(exc))
    except (MissingExtraError, StoreInUseError) as exc:
        print(f"a2a-grpc: {exc}", file=sys.stderr)
        return 1
    except PortInUseError as exc:
        print(f"a2a-grpc: {exc}; pick another port with --grpc-port / --http-port",
              file=sys.stderr)
        return 1
    except (OSError, RuntimeError) as exc:  # the store could not be opened or migrated
        print(f"a2a-grpc: {exc}; check --store", file=sys.stderr)
        return 1
    return 0
