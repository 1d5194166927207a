"""The official SDK 1.x client asks for an extension and reads, on the wire,
that it was activated (examples/hops_extension.py), on each binding."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from examples.hops_extension import HOPS
from tests.processes import reap, start_server

PEERS = Path(__file__).parent / "peers"
pytestmark = pytest.mark.interop


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON", "GRPC"])
async def test_the_official_client_reads_the_activated_extension(
        sdk_python: Path, monkeypatch: pytest.MonkeyPatch, binding: str) -> None:
    monkeypatch.setenv("HOP_NAME", "solo")
    server = await start_server("serve", "--store", "memory", "--agent",
                                "examples.hops_extension:Hops")
    try:
        proc = await asyncio.create_subprocess_exec(
            str(sdk_python), str(PEERS / "sdk_extensions_client.py"), server.url, binding, HOPS,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        out, err = await asyncio.wait_for(proc.communicate(), 120)
    finally:
        reap(server.proc)
    assert proc.returncode == 0, err.decode()[-3000:]
    seen = json.loads(out)
    assert seen == {"send": {"activated": HOPS, "hops": ["solo"]},
                    "stream": {"activated": HOPS, "hops": ["solo"]}}
