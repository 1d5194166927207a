"""The official @a2a-js/sdk client's gRPC transport against `a2a-grpc serve`:
it resolves our card, takes the GRPC interface's `host:port` as it is (it
hands the value to grpc-js, which fails on `grpc://host:port`), and calls."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from tests.processes import reap, start_server

PEERS = Path(__file__).parent / "peers"
pytestmark = pytest.mark.interop


async def test_the_official_js_client_over_grpc_from_our_card(node_modules: Path) -> None:
    server = await start_server("serve")
    try:
        proc = await asyncio.create_subprocess_exec(
            "node", str(PEERS / "a2a_js_client.cjs"), server.url,
            env={**os.environ, "NODE_PATH": str(node_modules)},
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        out, err = await asyncio.wait_for(proc.communicate(), 60)
    finally:
        reap(server.proc)
    assert proc.returncode == 0, err.decode()[-3000:]
    seen = json.loads(out)
    completed, working = 3, 2  # TaskState numbers, as the JS client gives them
    assert seen["send"] == {"id": True, "state": completed, "artifact": "echo: hello from a2a-js"}
    assert seen["stream"] == ["task", f"status:{working}", "artifactUpdate", "artifactUpdate",
                              "artifactUpdate", f"status:{completed}"]
    assert seen["get"] == {"sameId": True, "chunks": 3}
    assert seen["notFound"] == "GrpcTaskNotFoundError"  # typed from our ErrorInfo
