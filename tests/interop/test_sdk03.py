"""The official a2a-sdk 0.3.x client (the line most deployed agents still run),
in its own virtualenv, against `a2a-grpc serve`: it must accept our one card
for both dialects and speak A2A 0.3 to the same server over each of its
three bindings (JSON-RPC, HTTP+JSON under /v1, gRPC's a2a.v1 service),
including a push notification it set, delivered in 0.3's shape."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.interop.envs import run_peer
from tests.processes import reap, start_server

PEERS = Path(__file__).parent / "peers"
pytestmark = pytest.mark.interop


# How each binding reports an unknown task and a task that can't be canceled.
ERRORS = {"JSONRPC": {"get_unknown": -32001, "cancel_done": -32002},
          "HTTP+JSON": {"get_unknown": "http:404", "cancel_done": "http:409"},
          "GRPC": {"get_unknown": "grpc:NOT_FOUND", "cancel_done": "grpc:FAILED_PRECONDITION"}}


@pytest.mark.parametrize("transport", ["JSONRPC", "HTTP+JSON", "GRPC"])
async def test_the_official_03_client(sdk03_python: Path, transport: str) -> None:
    server = await start_server("serve", "--allow-push-to", ".example.com",
                                "--allow-push-to", "127.0.0.1/32", "--allow-http-push")
    try:
        seen = await run_peer(str(sdk03_python), str(PEERS / "sdk03_client.py"), server.url,
                              transport)
    finally:
        reap(server.proc)
    print(json.dumps(seen, indent=1), file=sys.stderr)
    assert seen["card"] == {"url": server.url + "/", "preferred": "JSONRPC", "version": "0.3.0",
                            "transports": ["GRPC", "HTTP+JSON", "JSONRPC"]}
    assert seen["send"] == {"state": "completed", "kind": "task", "artifact": "echo: hello 0.3"}
    assert seen["reply"] == {"kind": "message", "text": "hey"}
    assert seen["stream"] == ["task", "status-update:working:final=False",
                              "artifact-update:chunk 1/2", "artifact-update:chunk 2/2",
                              "status-update:completed:final=True"]
    assert seen["get"] == {"same_id": True, "history": 1}
    assert seen["cancel"] == {"state": "canceled", "first": "task",
                              "last": "status-update:canceled:final=True"}
    assert seen["push"] == {
        "url": True, "token": "tok", "listed": [True],
        "deleted": None if transport == "JSONRPC" else {}, "answered": "completed",
        "delivered": {"kind": "task", "id": True, "state": "completed"}}
    assert seen["errors"] == ERRORS[transport]
