"""The official a2a-sdk 0.3.x client (the line most deployed agents still run),
in its own virtualenv, against `a2a-grpc serve`: it must accept our one card
for both generations and speak A2A 0.3 JSON-RPC to the same endpoint."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.interop.envs import run_peer
from tests.processes import reap, start_server

PEERS = Path(__file__).parent / "peers"
pytestmark = pytest.mark.interop


async def test_the_official_03_client_over_jsonrpc(sdk03_python: Path) -> None:
    server = await start_server("serve", "--allow-push-to", ".example.com")
    try:
        seen = await run_peer(str(sdk03_python), str(PEERS / "sdk03_client.py"), server.url)
    finally:
        reap(server.proc)
    print(json.dumps(seen, indent=1), file=sys.stderr)
    assert seen["card"] == {"url": server.url + "/", "preferred": "JSONRPC", "version": "0.3.0"}
    assert seen["send"] == {"state": "completed", "kind": "task", "artifact": "echo: hello 0.3"}
    assert seen["reply"] == {"kind": "message", "text": "hey"}
    assert seen["stream"] == ["task", "status-update:working:final=False",
                              "artifact-update:chunk 1/2", "artifact-update:chunk 2/2",
                              "status-update:completed:final=True"]
    assert seen["get"] == {"same_id": True, "history": 0}
    assert seen["cancel"] == {"state": "canceled", "first": "task",
                              "last": "status-update:canceled:final=True"}
    assert seen["push"] == {"url": "https://hooks.example.com/a2a03", "token": "tok",
                            "listed": ["https://hooks.example.com/a2a03"], "deleted": None}
    assert seen["errors"] == {"get_unknown": -32001, "cancel_done": -32002}
