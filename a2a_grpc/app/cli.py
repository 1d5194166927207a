"""`a2a-grpc` command line: `serve` (settings.py declares its flags), `bridge`,
the client verbs, and the store's and keys' commands (admin.py)."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from a2a_grpc.app import process
from a2a_grpc.app.admin_args import ADMIN, add_admin
from a2a_grpc.client.commands import VERBS, add_commands
from a2a_grpc.core.extras import MissingExtraError
from a2a_grpc.core.version import describe

if TYPE_CHECKING:
    from a2a_grpc.app.settings import ServeSettings

# What `bridge` shares with `serve`: the HTTP side, TLS, the process, the logs.
BRIDGE_NETWORK = ("host", "http_port", "public_url", "keepalive", "max_body", "grace", "loop",
                  "tls_cert", "tls_key", "tls_client_ca", "tls_require_client_cert")


def _parser(only: str | None = None) -> argparse.ArgumentParser:
    """The command line; `only`: the one command whose flags are declared
    (the others are named, with their help), so that a client command or
    `--help` loads no server module; None: every command's."""
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
    b = sub.add_parser("bridge", help="JSON-RPC and REST in front of any A2A gRPC server")
    if only in (None, "serve", "bridge"):
        from a2a_grpc.app.settings import GROUPS
        from a2a_grpc.app.settings_load import add_flags

        s.add_argument("--config", type=Path, metavar="FILE",
                       help="settings from this TOML file (see above)")
        add_flags(s, *GROUPS)
        b.add_argument("--upstream", required=True, metavar="HOST:PORT",
                       help="the A2A gRPC server to stand in front of")
        b.add_argument("--card", type=Path, metavar="FILE",
                       help="agent card JSON to serve (interfaces are filled in)")
        b.add_argument("--forward-header", action="append", default=[], metavar="NAME",
                       help="pass this header (or query parameter) on to the upstream as "
                            "metadata, e.g. the card's API key name; Authorization, Cookie "
                            "and X-API-Key always are (repeatable)")
        add_flags(b, "network", only=BRIDGE_NETWORK)
        add_flags(b, "observability", only=("log_level", "log_format"))
    add_commands(sub)
    add_admin(sub, declared=only is None or only in ADMIN)
    return parser


def _command(argv: list[str]) -> str:
    """The command a command line names ("" when none: --help, --version)."""
    return next((arg for arg in argv if not arg.startswith("-")), "")


def serve_settings(argv: list[str]) -> ServeSettings:
    """The settings of a `serve` command line (what the carried app reads again)."""
    from a2a_grpc.app.settings_load import load

    args = _parser("serve").parse_args(argv)
    return load(args, getattr(args, "config", None))


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = _parser(_command(argv))
    args = parser.parse_args(argv)
    if args.command in ADMIN:
        from a2a_grpc.app.admin import run_admin

        return run_admin(args)
    try:
        if args.command in VERBS:
            from a2a_grpc.client.commands import main_for

            try:
                return main_for(args)
            except MissingExtraError as exc:  # `card --verify` without [auth]: says which
                return process.fail(str(exc))
        try:
            settings = _checked(args)
        except ValueError as exc:  # a flag's mistake: the usage says how to write it
            if process.worker() is not None:
                return process.fail(str(exc), 2)
            parser.error(str(exc))
        return _run(args, argv, settings)
    except BrokenPipeError:  # `a2a-grpc ... | head -1`: the reader has all it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no 2nd error at exit
        return 141  # as a shell reports SIGPIPE


def _checked(args: argparse.Namespace) -> ServeSettings:
    """The settings of `serve` or `bridge`, ValueError for flags that do not go
    together (said with the usage)."""
    from a2a_grpc.app.settings_load import load
    from a2a_grpc.observe import logs

    settings = load(args, getattr(args, "config", None))
    logs.setup(settings.observability.log_level, settings.observability.log_format,
               process.worker())
    if args.command == "serve" and settings.network.workers < 1:
        raise ValueError("--workers must be 1 or more")
    if args.command == "serve" and settings.agent.hosted and settings.agent.agent:
        raise ValueError("--agent and --host-agent: name every agent with "
                         "--host-agent NAME=MODULE:ATTR")
    if args.command == "serve" and settings.agent.hosted and settings.agent.card:
        raise ValueError("--card is the card of the one agent --agent serves; hosted "
                         "agents bring their own")
    return settings


def _run(args: argparse.Namespace, argv: list[str], settings: ServeSettings) -> int:
    """Serve (or bridge) until stopped; what stops it from starting is said in
    one line, without the usage: the flags were right."""
    from a2a_grpc.app.carriers import carrier, run_loop
    from a2a_grpc.app.loading import AgentLoadError, load_card
    from a2a_grpc.app.options import http_options
    from a2a_grpc.app.serve import gateway
    from a2a_grpc.app.workers import supervise
    from a2a_grpc.core.ports import PortInUseError
    from a2a_grpc.stores import StoreInUseError, StoreOpenError

    net = settings.network
    try:
        if args.command == "serve" and settings.agent.card:
            load_card(settings.agent.card)  # a bad card is said before anything starts
        if process.worker() is not None:
            process.stop_with_parent()
        if args.command == "serve" and net.workers > 1 and process.worker() is None:
            return asyncio.run(supervise(argv, settings))
        if args.command == "serve":
            return carrier(net.grpc_carrier).run(argv, settings)
        run_loop(gateway(args.upstream, http_options(net), args.card, net.grace,
                         tuple(args.forward_header)), net.loop)
    except process.StartFailure as exc:  # a carrier's app said why (pyvoy/app.py: told)
        return process.fail(str(exc), exc.code)
    except (AgentLoadError, ValueError) as exc:  # the agent's, the card's, the store's files
        return process.fail(str(exc), 2)
    except PortInUseError as exc:
        return process.fail(f"{exc}; pick another port with --grpc-port / --http-port")
    except (MissingExtraError, StoreInUseError, StoreOpenError, OSError, RuntimeError) as exc:
        return process.fail(str(exc))
    return 0
