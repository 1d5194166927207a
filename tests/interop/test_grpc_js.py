"""A client in another language: Node's grpc-js with stubs built from our proto."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import google.api
import grpc_tools
import pytest

from a2a_grpc.cards.card import card_for
from a2a_grpc.demos.demo import DemoAgent
from a2a_grpc.handler.request_handler import RequestHandler
from tests.carried import on_carrier

ROOT = Path(__file__).resolve().parents[2]
PEERS = Path(__file__).parent / "peers"
pytestmark = pytest.mark.interop


def demo_handler() -> RequestHandler:
    agent = DemoAgent()
    return RequestHandler(agent, card_for(agent))


@pytest.mark.parametrize("carrier", ["grpc.aio", "pyvoy"])
async def test_grpc_js_client(node_modules: Path, carrier: str) -> None:
    googleapis = Path(next(iter(google.api.__path__))).parent.parent
    well_known = Path(grpc_tools.__file__).parent / "_proto"
    async with on_carrier(carrier, "tests.interop.test_grpc_js:demo_handler") as port:
        proc = await asyncio.create_subprocess_exec(
            "node", str(PEERS / "grpc_js_client.js"), f"127.0.0.1:{port}",
            str(ROOT / "proto"), str(googleapis), str(well_known),
            env={**os.environ, "NODE_PATH": str(node_modules)},
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0, err.decode()[-3000:]
    seen = json.loads(out)
    assert seen["send"] == {"payload": "task", "state": "TASK_STATE_COMPLETED",
                            "artifact": "echo: hello from node"}
    assert seen["get"] == {"sameId": True, "history": 0}
    assert seen["stream"] == ["task", "TASK_STATE_WORKING", "artifactUpdate", "artifactUpdate",
                              "TASK_STATE_COMPLETED"]
    assert seen["list"] == {"count": 1, "total": 2, "hasNext": True}
    status = {"statusCode": 5, "code": 5, "sameMessage": True, "reason": "TASK_NOT_FOUND",
              "domain": "a2a-protocol.org"}
    assert seen["notFound"] == status
    assert seen["invalid"] == {**status, "code": 3, "statusCode": 3, "reason": "INVALID_PARAMS"}
