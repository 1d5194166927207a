"""The official @a2a-js/sdk client's gRPC transport against `a2a-grpc serve`:
it resolves our card, takes the GRPC interface's `host:port` as it is (it
hands the value to grpc-js, which fails on `grpc://host:port`), and calls."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.interop.envs import run_peer
from tests.processes import reap, start_server

PEERS = Path(__file__).parent / "peers"
pytestmark = pytest.mark.interop


async def test_the_official_js_client_over_grpc_from_our_card(node_modules: Path) -> None:
    server = await start_server("serve")
    try:
        seen = await run_peer("node", str(PEERS / "a2a_js_client.cjs"), server.url,
                              env={**os.environ, "NODE_PATH": str(node_modules)})
    finally:
        reap(server.proc)
    completed, working = 3, 2  # TaskState numbers, as the JS client gives them
    assert seen["send"] == {"id": True, "state": completed, "artifact": "echo: hello from a2a-js"}
    assert seen["stream"] == ["task", f"status:{working}", "artifactUpdate", "artifactUpdate",
                              "artifactUpdate", f"status:{completed}"]
    assert seen["get"] == {"sameId": True, "chunks": 3}
    assert seen["notFound"] == "GrpcTaskNotFoundError"  # typed from our ErrorInfo
