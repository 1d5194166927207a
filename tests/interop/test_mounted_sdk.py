"""The official a2a-sdk clients, 1.x and 0.3, in virtualenvs of their own,
against the demo agent mounted under /a2a in a FastAPI app with its own
middleware, served by uvicorn in a process of its own
(examples/mount_fastapi.py): the same checks as against `serve`."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import aiohttp
import pytest

from tests.interop.envs import run_peer
from tests.interop.test_official_sdk_http import check_sdk_http
from tests.interop.test_sdk03 import ERRORS
from tests.processes import mounted_app, reap

PEERS = Path(__file__).parent / "peers"
pytestmark = pytest.mark.interop


@pytest.mark.parametrize(("binding", "transport"), [("JSONRPC", "JsonRpcTransport"),
                                                    ("HTTP+JSON", "RestTransport")])
async def test_the_official_client_through_the_host_app(
        sdk_python: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        binding: str, transport: str) -> None:
    server = await mounted_app(tmp_path, monkeypatch, allow_push_to=".example.com")
    try:
        proc = await asyncio.create_subprocess_exec(
            str(sdk_python), str(PEERS / "sdk_http_client.py"), server.url, binding,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        out, err = await asyncio.wait_for(proc.communicate(), 120)
        assert proc.returncode == 0, err.decode()[-3000:] + server.log()[-3000:]
        check_sdk_http(json.loads(out), transport)
        async with aiohttp.ClientSession() as http, \
                http.get(f"http://127.0.0.1:{server.http_port}/seen") as resp:
            seen = await resp.json()
    finally:
        reap(server.proc)
    # The host's middleware saw the client's calls: the card, then each operation.
    assert seen[0] == "GET /a2a/.well-known/agent-card.json"
    mounted = [s for s in seen if s.split()[1].startswith("/a2a/")]
    assert len(mounted) == len(seen) - 1 and len(mounted) > 20  # all but its own /seen


@pytest.mark.parametrize("transport", ["JSONRPC", "HTTP+JSON"])
async def test_the_official_03_client_through_the_host_app(
        sdk03_python: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        transport: str) -> None:
    server = await mounted_app(tmp_path, monkeypatch, allow_push_to=".example.com,127.0.0.1/32",
                               allow_http_push="true")
    try:
        seen = await run_peer(str(sdk03_python), str(PEERS / "sdk03_client.py"), server.url,
                              transport)
    finally:
        reap(server.proc)
    print(json.dumps(seen, indent=1), file=sys.stderr)
    assert seen["card"]["url"] == server.url + "/"
    assert seen["card"]["transports"] == ["GRPC", "HTTP+JSON", "JSONRPC"]
    assert seen["send"] == {"state": "completed", "kind": "task", "artifact": "echo: hello 0.3"}
    assert seen["stream"] == ["task", "status-update:working:final=False",
                              "artifact-update:chunk 1/2", "artifact-update:chunk 2/2",
                              "status-update:completed:final=True"]
    assert seen["cancel"] == {"state": "canceled", "first": "task",
                              "last": "status-update:canceled:final=True"}
    assert seen["push"]["delivered"] == {"kind": "task", "id": True, "state": "completed"}
    assert seen["errors"] == ERRORS[transport]
