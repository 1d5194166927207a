"""The official a2a-sdk client over JSON-RPC and HTTP+JSON, starting from our card."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp.test_utils import TestServer

from a2a_grpc.bridge import CARD, create_app
from a2a_grpc.cards.card import Interface, card_for, public_card
from a2a_grpc.cards.check import LEGACY
from a2a_grpc.demos.demo import DemoAgent
from a2a_grpc.handler.request_handler import RequestHandler
from tests.conftest import TEST_POLICY
from tests.processes import reap, start_server

PEERS = Path(__file__).parent / "peers"
pytestmark = pytest.mark.interop


@pytest.mark.parametrize(("binding", "transport"), [("JSONRPC", "JsonRpcTransport"),
                                                    ("HTTP+JSON", "RestTransport")])
async def test_sdk_over_http(sdk_python: Path, binding: str, transport: str) -> None:
    agent = DemoAgent()
    card = card_for(agent)
    card.capabilities.push_notifications = True  # config CRUD only; nothing is delivered
    handler = RequestHandler(agent, card, push_policy=TEST_POLICY)
    app = create_app(handler, card)
    http = TestServer(app, host="127.0.0.1")
    await http.start_server()
    base = str(http.make_url("")).rstrip("/")
    app[CARD].update(public_card(card, [Interface("JSONRPC", base + "/"),
                                            Interface("HTTP+JSON", base)]))
    try:
        proc = await asyncio.create_subprocess_exec(
            str(sdk_python), str(PEERS / "sdk_http_client.py"), base, binding,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        out, err = await asyncio.wait_for(proc.communicate(), 120)
    finally:
        await http.close()
        await handler.close()
    assert proc.returncode == 0, err.decode()[-3000:]
    check_sdk_http(json.loads(out), transport)


def check_sdk_http(seen: dict[str, Any], transport: str) -> None:
    """What peers/sdk_http_client.py sees of our demo agent, push configs on."""
    print(json.dumps(seen, indent=1), file=sys.stderr)
    assert seen["transport"] == transport
    assert seen["send"] == {"state": "TASK_STATE_COMPLETED", "artifact": "echo: hello"}
    assert seen["reply"] == "hey"
    assert seen["get"] == {"same_id": True, "history": 0}
    assert seen["stream"] == ["task:TASK_STATE_SUBMITTED", "TASK_STATE_WORKING",
                              "artifact_update", "artifact_update", "artifact_update",
                              "TASK_STATE_COMPLETED"]
    assert seen["list"] == {"count": 1, "total": 2, "has_next": True, "artifacts": 1}
    assert seen["cancel"] == {"state": "TASK_STATE_CANCELED", "first": "task:TASK_STATE_WORKING",
                              "last": "TASK_STATE_CANCELED"}
    assert seen["quiet_subscribe"] == ["task:TASK_STATE_INPUT_REQUIRED",
                                       "task:TASK_STATE_INPUT_REQUIRED", "TASK_STATE_WORKING",
                                       "artifact_update", "TASK_STATE_COMPLETED"]
    assert seen["push"] == {"id_assigned": True, "got": "https://hooks.example.com/a2a",
                            "listed": 1, "after_delete": 0}
    assert seen["errors"] == {
        "get_unknown": "TaskNotFoundError",
        "cancel_done": "TaskNotCancelableError",
        "follow_up_done": "UnsupportedOperationError",
        "subscribe_done": "UnsupportedOperationError",  # a stream of one error on JSON-RPC
        "subscribe_unknown": "TaskNotFoundError",
    }


@pytest.mark.parametrize(("binding", "transport"), [
    ("JSONRPC", "JsonRpcTransport"), ("HTTP+JSON", "RestTransport"), ("GRPC", "GrpcTransport")])
async def test_sdk_reads_a_pure_10_card(sdk_python: Path, binding: str, transport: str) -> None:
    """`serve --card-format 1.0`: none of 0.3's fields in the card, and the
    official 1.x client still finds and calls every binding from it."""
    server = await start_server("serve", "--card-format", "1.0")
    try:
        async with aiohttp.ClientSession() as session:
            async with session.get(server.url + "/.well-known/agent-card.json") as resp:
                card = await resp.json()
        assert not LEGACY & card.keys()
        assert [i["protocolBinding"] for i in card["supportedInterfaces"]] == [
            "GRPC", "JSONRPC", "HTTP+JSON"]
        proc = await asyncio.create_subprocess_exec(
            str(sdk_python), str(PEERS / "sdk_card_client.py"), server.url, binding,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        out, err = await asyncio.wait_for(proc.communicate(), 120)
    finally:
        reap(server.proc)
    assert proc.returncode == 0, err.decode()[-3000:]
    assert json.loads(out) == {"transport": transport, "send": "TASK_STATE_COMPLETED",
                               "get": "echo: hello",
                               "stream": ["task:TASK_STATE_SUBMITTED", "TASK_STATE_WORKING",
                                          "artifact_update", "artifact_update",
                                          "TASK_STATE_COMPLETED"]}


async def test_the_default_card_keeps_the_03_fields() -> None:
    server = await start_server("serve")
    try:
        async with aiohttp.ClientSession() as session:
            async with session.get(server.url + "/.well-known/agent-card.json") as resp:
                card = await resp.json()
    finally:
        reap(server.proc)
    assert {"url", "preferredTransport", "additionalInterfaces", "protocolVersion",
            "supportsAuthenticatedExtendedCard"} <= card.keys()


@pytest.mark.parametrize(("binding", "transport"), [
    ("JSONRPC", "JsonRpcTransport"), ("GRPC", "GrpcTransport")])
async def test_sdk_calls_a_server_with_the_1_1_preview(sdk_python: Path, binding: str,
                                                       transport: str) -> None:
    """`serve --a2a-1.1-preview`: the card lists each interface for 1.0 and then
    for 1.1 (0.3's fields name each once), and the official 1.x client, which
    speaks 1.0, calls it as before."""
    server = await start_server("serve", "--a2a-1.1-preview")
    try:
        async with aiohttp.ClientSession() as session:
            async with session.get(server.url + "/.well-known/agent-card.json") as resp:
                card = await resp.json()
        assert [(i["protocolBinding"], i["protocolVersion"]) for i in card[
            "supportedInterfaces"]] == [(b, v) for v in ("1.0", "1.1")
                                        for b in ("GRPC", "JSONRPC", "HTTP+JSON")]
        assert len(card["additionalInterfaces"]) == 3
        proc = await asyncio.create_subprocess_exec(
            str(sdk_python), str(PEERS / "sdk_card_client.py"), server.url, binding,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        out, err = await asyncio.wait_for(proc.communicate(), 120)
    finally:
        reap(server.proc)
    assert proc.returncode == 0, err.decode()[-3000:]
    assert json.loads(out)["transport"] == transport
    assert json.loads(out)["get"] == "echo: hello"
