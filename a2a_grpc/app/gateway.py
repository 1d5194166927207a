"""`a2a-grpc bridge`: JSON-RPC, REST and a card in front of any A2A gRPC server."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from google.protobuf import json_format

from a2a_grpc.app.http import (
    Draining,
    HttpOptions,
    http_interfaces,
    linger,
    start_http,
    tune_collector,
    wait_for_signal,
)
from a2a_grpc.bridge import CARD
from a2a_grpc.cards.card import host_port, public_card
from a2a_grpc.generated.a2a_pb2 import AgentCapabilities, AgentCard
from a2a_grpc.grpc_edge.upstream import UpstreamService
from a2a_grpc.observe.metrics import Metrics

log = logging.getLogger("a2a_grpc")


def gateway_card(upstream: str, card_file: Path | None) -> AgentCard:
    if card_file is not None:
        try:
            return json_format.Parse(card_file.read_text(), AgentCard(),
                                     ignore_unknown_fields=True)
        except (OSError, json_format.ParseError) as exc:
            raise ValueError(f"cannot read the agent card {card_file}: {exc}") from exc
    return AgentCard(
        name=f"A2A gateway to {upstream}",
        description=f"JSON-RPC and REST in front of the A2A gRPC server at {upstream}.",
        version="1.0.0",
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"], default_output_modes=["text/plain"],
    )


async def gateway(upstream: str, http: HttpOptions, card_file: Path | None = None,
                  grace: float = 5.0, forward: tuple[str, ...] = ()) -> None:
    """Serve JSON-RPC, REST and a card in front of the gRPC server `upstream`,
    passing on the credentials in `forward` headers (beside the usual ones)."""
    base = gateway_card(upstream, card_file)
    service = UpstreamService(upstream, forward=forward)
    runner, flag = None, Draining()
    try:
        runner, port = await start_http(service, base, http, grace, metrics=Metrics(),
                                        drains=flag)
        # The upstream may number events its own way: no resumable-streams promise.
        runner.app[CARD].update(public_card(base, http_interfaces(http, port), resumable=False))
        log.info("listening: HTTP on %s", host_port(http.host, port))
        log.info("A2A gateway: JSON-RPC and REST on http://%s -> gRPC %s; Ctrl-C stops it",
                 host_port(http.host, port), upstream)
        tune_collector()
        await wait_for_signal()
        # As serve drains: every answer from now on closes its connection, and
        # the gateway waits for its clients to let go of theirs (up to `grace`)
        # rather than closing one under a request its client is sending.
        log.info("shutting down: draining calls for up to %.0f s", grace)
        flag.draining = True
        left = await linger(runner, asyncio.get_running_loop().time() + grace)
        log.info("drained%s", f"; {left} connection(s) still open, closed" if left else "")
    finally:
        if runner is not None:
            await runner.cleanup()
        await service.close()
        log.info("stopped")
