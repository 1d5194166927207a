"""`a2a-grpc` command line."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys

from .demo import DemoAgent
from .server import load_agent, serve


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="a2a-grpc", description="A2A 1.0 server over gRPC.")
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("serve", help="serve an agent (the built-in demo agent by default)")
    s.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    s.add_argument("--grpc-port", type=int, default=50051, help="gRPC port (default 50051)")
    s.add_argument("--agent", metavar="MODULE:ATTR",
                   help="your AgentExecutor (instance, class or factory) instead of the demo")
    s.add_argument("--grace", type=float, default=5.0,
                   help="seconds to let calls finish on shutdown (default 5)")
    s.add_argument("--log-level", default="INFO", help="DEBUG, INFO, WARNING... (default INFO)")
    args = parser.parse_args(argv)

    logging.basicConfig(level=args.log_level.upper(),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        agent = load_agent(args.agent) if args.agent else DemoAgent()
    except ValueError as exc:
        parser.error(str(exc))
    try:
        asyncio.run(serve(agent, args.host, args.grpc_port, args.grace))
    except OSError as exc:
        print(f"a2a-grpc: {exc}; pick another port with --grpc-port", file=sys.stderr)
        return 1
    return 0
