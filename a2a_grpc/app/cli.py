"""`a2a-grpc` command line."""

from __future__ import annotations

import argparse
import asyncio
import getpass
import json
import logging
import sys
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

from a2a_grpc.agents.demo import DemoAgent
from a2a_grpc.app.limits import LimitOptions
from a2a_grpc.app.loading import load_agent
from a2a_grpc.app.serve import HttpOptions, ObserveOptions, PushOptions, gateway, serve
from a2a_grpc.app.tls import TlsFiles
from a2a_grpc.auth.basic import hash_password
from a2a_grpc.auth.config import add_flags as add_auth_flags
from a2a_grpc.auth.config import options_from as auth_options
from a2a_grpc.bridge import BridgeConfig
from a2a_grpc.bus import Backlog
from a2a_grpc.bus.local import BACKLOG_BYTES, BACKLOG_EVENTS
from a2a_grpc.cards.card import grpc_address
from a2a_grpc.client.commands import VERBS, add_commands, main_for
from a2a_grpc.grpc_edge.server import PortInUseError
from a2a_grpc.observe import logs
from a2a_grpc.push.policy import PushPolicy
from a2a_grpc.push.sender import SenderConfig
from a2a_grpc.stores import DEFAULT_URL, open_store


def _http_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--http-port", type=int, default=8080,
                   help="JSON-RPC, REST and agent card port (default 8080)")
    p.add_argument("--public-url", metavar="URL",
                   help="base URL clients use for HTTP, when behind a proxy "
                        "(default http://HOST:HTTP_PORT)")
    p.add_argument("--keepalive", type=float, default=2.0, metavar="SECONDS",
                   help="seconds between SSE keep-alive comments on quiet streams (default 2: "
                        "under the 5 s read timeout of the official Python clients and the "
                        "idle timeouts of proxies)")
    p.add_argument("--max-body", type=int, default=8 * 1024 * 1024,
                   help="largest HTTP request body in bytes (default 8 MiB)")
    t = p.add_argument_group("TLS (both ports; the files may be replaced while serving)")
    t.add_argument("--tls-cert", type=Path, metavar="PEM", help="certificate chain")
    t.add_argument("--tls-key", type=Path, metavar="PEM", help="its private key")
    t.add_argument("--tls-client-ca", type=Path, metavar="PEM",
                   help="ask for client certificates signed by this CA (mutual TLS)")
    t.add_argument("--tls-require-client-cert", action="store_true",
                   help="with --tls-client-ca: refuse connections without a client certificate")


def _tls(args: argparse.Namespace) -> TlsFiles | None:
    if args.tls_cert is None and args.tls_key is None:
        if args.tls_client_ca or args.tls_require_client_cert:
            raise ValueError("--tls-client-ca needs --tls-cert and --tls-key")
        return None
    if args.tls_cert is None or args.tls_key is None:
        raise ValueError("TLS needs both --tls-cert and --tls-key")
    files = TlsFiles(args.tls_cert, args.tls_key, args.tls_client_ca,
                     args.tls_require_client_cert)
    files.check()
    return files


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


def _limits(args: argparse.Namespace) -> LimitOptions:
    for flag in ("rate_limit", "rate_burst", "max_streams", "max_tasks"):
        if getattr(args, flag) < 0:
            raise ValueError(f"--{flag.replace('_', '-')} must be >= 0")
    if args.stream_backlog < 1:
        raise ValueError("--stream-backlog must be >= 1")
    return LimitOptions(args.rate_limit, args.rate_burst, args.max_streams, args.max_tasks)


def _grpc_address(text: str) -> str:
    try:
        return grpc_address(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def duration(text: str) -> float:
    """`90`, `90s`, `30m`, `12h`, `7d` -> seconds."""
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400}
    number, unit = (text[:-1], text[-1]) if text and text[-1] in units else (text, "s")
    try:
        value = float(number) * units[unit]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a duration like 90s, 30m, 12h or 7d") from None
    if value <= 0:
        raise argparse.ArgumentTypeError("the retention age must be positive")
    return value


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--grace", type=float, default=5.0,
                   help="seconds to let calls finish on shutdown (default 5)")
    p.add_argument("--log-level", default="INFO", help="DEBUG, INFO, WARNING... (default INFO)")
    p.add_argument("--log-format", choices=("text", "json"), default="text",
                   help="text lines (default), or one JSON object a line with trace ids")
    p.add_argument("--loop", choices=("auto", "uvloop", "asyncio"), default="auto",
                   help="event loop: uvloop when installed (auto, the default), or asyncio's")


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="a2a-grpc", description="A2A 1.0 server, gRPC first.")
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("serve", help="serve an agent (the built-in demo agent by default)")
    _common(s)
    s.add_argument("--grpc-port", type=int, default=50051,
                   help="gRPC port (default 50051; 0 picks a free one, named in the log)")
    s.add_argument("--grpc-public-address", type=_grpc_address, metavar="HOST:PORT",
                   help="the gRPC address the card advertises, when clients reach it through "
                        "a proxy or load balancer (default HOST:GRPC_PORT)")
    _http_flags(s)
    s.add_argument("--follow-ups", choices=("any", "interrupted"), default="any",
                   help="which tasks take a follow-up message: any non-final one (the "
                        "default, spec 3.3.3), or only one asking for input or auth")
    s.add_argument("--agent", metavar="MODULE:ATTR",
                   help="your AgentExecutor (instance, class or factory) instead of the demo")
    s.add_argument("--store", default=DEFAULT_URL, metavar="URL",
                   help="memory, sqlite:///PATH or postgresql://USER@HOST/DB "
                        f"(default {DEFAULT_URL}, a file in the working directory)")
    s.add_argument("--bus", metavar="URL",
                   help="share task events between replicas: redis://HOST:PORT/DB "
                        "(Redis Streams; ?prefix=P names the keys, default a2a). Default: "
                        "in this process only")
    s.add_argument("--lease", type=float, default=15.0, metavar="SECONDS",
                   help="with --bus: a replica that has not renewed its running tasks for "
                        "this long is taken for stopped; another fails them (or resumes them) "
                        "(default 15)")
    s.add_argument("--allow-push-to", action="append", default=[], metavar="HOST|CIDR",
                   help="let webhooks reach this host name (.example.com: and subdomains), "
                        "address or network, even if not public; repeatable")
    s.add_argument("--allow-http-push", action="store_true",
                   help="allow plain http:// webhook URLs (default: https only)")
    s.add_argument("--push-keys", type=Path, metavar="DIR",
                   help="sign push notifications (JWT) with the PEM keys in DIR, creating "
                        "one if there is none; the JWKS is served at /.well-known/jwks.json")
    s.add_argument("--card-keys", type=Path, metavar="DIR",
                   help="sign the agent card (JWS, spec 8.4) with the newest PEM key in DIR, "
                        "creating one if there is none; its JWKS is /.well-known/jwks.json")
    s.add_argument("--push-timeout", type=float, default=10.0,
                   help="seconds per webhook attempt (default 10)")
    s.add_argument("--push-attempts", type=int, default=8,
                   help="attempts before a notification is dead-lettered (default 8)")
    s.add_argument("--push-backoff", type=float, default=1.0,
                   help="seconds before the first retry; doubles, with jitter (default 1)")
    add_auth_flags(s)
    lim = s.add_argument_group("limits per caller (its subject, or its IP when anonymous); "
                               "past one: HTTP 429 + Retry-After, gRPC RESOURCE_EXHAUSTED")
    lim.add_argument("--rate-limit", type=float, default=0.0, metavar="PER_S",
                     help="requests per second (default: no limit)")
    lim.add_argument("--rate-burst", type=int, default=0, metavar="N",
                     help="requests at once before the rate applies (default: 2 s worth)")
    lim.add_argument("--max-streams", type=int, default=0, metavar="N",
                     help="streams open at once (default: no limit)")
    lim.add_argument("--max-tasks", type=int, default=0, metavar="N",
                     help="agent runs going at once on the caller's tasks (default: no limit)")
    lim.add_argument("--stream-backlog", type=int, default=BACKLOG_EVENTS, metavar="EVENTS",
                     help="events a stream's reader may fall behind before the stream is "
                          f"ended with a retryable error (default {BACKLOG_EVENTS}; "
                          f"and at most {BACKLOG_BYTES >> 20} MiB)")
    s.add_argument("--metrics-port", type=int, metavar="PORT",
                   help="also serve /metrics, /healthz and /readyz alone on this port (for "
                        "deployments exposing only gRPC); they are on the HTTP port anyway")
    s.add_argument("--no-inspector", action="store_true",
                   help="do not serve the inspector page (/inspector) on the HTTP port")
    s.add_argument("--inspector-remote-targets", action="store_true",
                   help="let the inspector call other agents for browsers on other machines "
                        "too (default: only for a browser on this one)")
    s.add_argument("--retention", type=duration, metavar="AGE",
                   help="delete final tasks older than AGE (e.g. 90s, 30m, 12h, 7d); "
                        "default: keep everything")
    b = sub.add_parser("bridge", help="JSON-RPC and REST in front of any A2A gRPC server")
    _common(b)
    b.add_argument("--upstream", required=True, metavar="HOST:PORT",
                   help="the A2A gRPC server to stand in front of")
    _http_flags(b)
    b.add_argument("--card", type=Path, metavar="FILE",
                   help="agent card JSON to serve (interfaces are filled in)")
    b.add_argument("--forward-header", action="append", default=[], metavar="NAME",
                   help="pass this header (or query parameter) on to the upstream as "
                        "metadata, e.g. the card's API key name; Authorization, Cookie and "
                        "X-API-Key always are (repeatable)")
    add_commands(sub)
    d = sub.add_parser("dead-letters",
                       help="list push notifications that were given up on (newest last)")
    d.add_argument("--store", default=DEFAULT_URL, metavar="URL", help="the server's --store")
    d.add_argument("--limit", type=int, default=100)
    pw = sub.add_parser("passwd", help="a line for serve --basic-users: USER:HASH (the "
                        "password is read from the terminal, or from stdin when piped)")
    pw.add_argument("user")
    args = parser.parse_args(argv)
    if args.command == "passwd":
        return _passwd(args.user)
    if args.command == "dead-letters":
        return asyncio.run(_dead_letters(args.store, args.limit))
    if args.command in VERBS:
        return main_for(args)

    logs.setup(args.log_level, args.log_format)
    try:
        http = HttpOptions(args.host, args.http_port, args.public_url,
                           BridgeConfig(keepalive=args.keepalive, max_body_bytes=args.max_body),
                           _tls(args))
        if args.command == "serve":
            agent = load_agent(args.agent) if args.agent else DemoAgent()
            push = PushOptions(
                PushPolicy.from_flags(args.allow_push_to, args.allow_http_push), args.push_keys,
                SenderConfig(timeout=args.push_timeout, max_attempts=args.push_attempts,
                             base_delay=args.push_backoff))
            run_loop(serve(agent, args.host, args.grpc_port, http, args.grace,
                           args.store, args.retention, push,
                           grpc_public=args.grpc_public_address,
                           interrupted_only=args.follow_ups == "interrupted",
                           auth=auth_options(args), card_keys=args.card_keys,
                           limits=_limits(args),
                           backlog=Backlog(events=args.stream_backlog),
                           bus_url=args.bus, lease_s=args.lease,
                           observe=ObserveOptions(args.metrics_port, not args.no_inspector,
                                                  args.inspector_remote_targets)),
                     args.loop)
        else:
            run_loop(gateway(args.upstream, http, args.card, args.grace,
                             tuple(args.forward_header)), args.loop)
    except ValueError as exc:
        parser.error(str(exc))
    except PortInUseError as exc:
        print(f"a2a-grpc: {exc}; pick another port with --grpc-port / --http-port",
              file=sys.stderr)
        return 1
    except (OSError, RuntimeError) as exc:  # the store could not be opened or migrated
        print(f"a2a-grpc: {exc}; check --store", file=sys.stderr)
        return 1
    return 0
