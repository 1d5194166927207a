"""The `a2a-grpc` program's entry point: the command line (cli.py) imported
and run here, so that Ctrl-C while it still loads (a second, for `serve`)
ends it as at any other moment, with status 130 and no traceback."""

from __future__ import annotations

INTERRUPTED = 130  # as a shell reports SIGINT


def main() -> int:
    try:
        from a2a_grpc.app.cli import main as run

        return run()
    except KeyboardInterrupt:
        return INTERRUPTED
