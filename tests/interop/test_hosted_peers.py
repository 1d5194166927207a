"""Clients we did not write reach each agent of a server hosting two
(`serve --host-agent`) from that agent's card: the official SDK 1.x client on
each binding (over gRPC it sets the tenant the card's interface gives), and
Node's grpc-js setting that tenant itself."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator
from pathlib import Path

import google.api
import grpc_tools
import pytest

from tests.processes import ROOT, Server, reap, start_server

PEERS = Path(__file__).parent / "peers"
pytestmark = pytest.mark.interop
AGENTS = ("--host-agent", "echo=demo", "--host-agent", "words=examples.word_count:WordCount")


@pytest.fixture
async def hosting() -> AsyncIterator[Server]:
    server = await start_server("serve", *AGENTS)
    try:
        yield server
    finally:
        reap(server.proc)


async def run(*command: str, env: dict[str, str] | None = None) -> dict[str, object]:
    proc = await asyncio.create_subprocess_exec(
        *command, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode == 0, err.decode()[-3000:]
    seen: dict[str, object] = json.loads(out)
    return seen


@pytest.mark.parametrize(("binding", "transport"), [
    ("JSONRPC", "JsonRpcTransport"), ("HTTP+JSON", "RestTransport"),
    # Over gRPC, the SDK wraps its transport to set the interface's tenant on each request.
    ("GRPC", "TenantTransportDecorator")])
async def test_the_official_client_reaches_each_agent_by_its_card(
        sdk_python: Path, hosting: Server, binding: str, transport: str) -> None:
    answers = {"echo": "echo: hello", "words": "1 words"}
    for name, answer in answers.items():
        seen = await run(str(sdk_python), str(PEERS / "sdk_card_client.py"),
                         f"{hosting.url}/{name}", binding)
        assert seen["transport"] == transport
        assert (seen["send"], seen["get"]) == ("TASK_STATE_COMPLETED", answer), (name, seen)


async def test_grpc_js_reaches_each_agent_by_its_card(node_modules: Path,
                                                      hosting: Server) -> None:
    googleapis = Path(next(iter(google.api.__path__))).parent.parent
    well_known = Path(grpc_tools.__file__).parent / "_proto"
    for name, answer in (("echo", "echo: hello"), ("words", "1 words")):
        seen = await run("node", str(PEERS / "grpc_js_card_client.js"),
                         f"{hosting.url}/{name}/.well-known/agent-card.json",
                         str(ROOT / "proto"), str(googleapis), str(well_known),
                         env={**os.environ, "NODE_PATH": str(node_modules)})
        assert seen == {"name": "Word counter" if name == "words" else "a2a-grpc demo agent",
                        "tenant": name, "state": "TASK_STATE_COMPLETED", "text": answer,
                        "untenanted": "INVALID_ARGUMENT"}
