"""`serve --grpc-carrier pyvoy`: the server carried by pyvoy, Envoy's HTTP/2
with the app in its embedded Python. Every binding (gRPC, JSON-RPC,
HTTP+JSON) answers on both --http-port and --grpc-port: one Envoy listener
with two addresses, one app (docs/grpc-carriers.md).

- serve.py: this process's side: Envoy started with the app, the ports it
  holds, SIGHUP passed on, SIGTERM/SIGINT drained, Envoy's admin asked.
- app.py: the ASGI app Envoy runs: the same `serve` command line read
  again, an A2AApp answering gRPC on its own port too
  (a2a_grpc/grpc_edge/asgi writes the gRPC wire).
- drain.py: how serve asks the app to drain or reload (FIFOs: no signal
  reaches Python inside Envoy), and the app follows serve's life.
- tls.py: the certificate Envoy serves, replaced while it runs.
- envoy.py: Envoy's process: a group of its own, its output held until it
  has started.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from a2a_grpc.app.settings import ServeSettings


class PyvoyCarrier:
    """The Carrier (app/carriers.py) `--grpc-carrier pyvoy` names."""

    def run(self, argv: Sequence[str], settings: ServeSettings) -> int:
        from a2a_grpc.pyvoy.serve import carry  # pyvoy's extra, checked there

        return asyncio.run(carry(argv, settings))
