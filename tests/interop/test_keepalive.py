"""Keep-alives no client reads as an event: the official Python clients (the
0.3 line and 1.x, each in its own virtualenv) follow a task that stays quiet
for 10 s, five keep-alive periods at the default 2 s, over JSON-RPC and
HTTP+JSON: a resubscribe (0.3) or subscribe (1.x) and a streaming send,
every event received, no error. Both SDKs read SSE with httpx-sse, which
turns a blank line after a comment into an empty event once it has seen an
event id (tests/integration/test_sse.py checks the bytes)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.interop.envs import run_peer
from tests.processes import reap, start_server

PEERS = Path(__file__).parent / "peers"
QUIET_S = 10
pytestmark = pytest.mark.interop


async def _run(python: Path, script: str) -> dict[str, dict[str, object]]:
    server = await start_server("serve", "--agent", "tests.agents:PacedAgent")
    try:
        seen = await run_peer(str(python), str(PEERS / script), server.url, str(QUIET_S))
    finally:
        reap(server.proc)
    print(json.dumps(seen, indent=1), file=sys.stderr)
    return seen


async def test_the_official_03_client_through_quiet_spells(sdk03_python: Path) -> None:
    seen = await _run(sdk03_python, "quiet03_client.py")
    for transport in ("JSONRPC", "HTTP+JSON"):
        assert seen[transport] == {
            # Subscribed to a task already WORKING: the task first, then the rest.
            "resubscribe": ["task", f"artifact-update:echo: quiet {QUIET_S}",
                            "status-update:completed:final=True"],
            "send_streaming": ["task", "status-update:working:final=False",
                               f"artifact-update:echo: quiet {QUIET_S}",
                               "status-update:completed:final=True"]}, transport


async def test_the_official_1x_client_through_quiet_spells(sdk_python: Path) -> None:
    seen = await _run(sdk_python, "quiet_client.py")
    for binding in ("JSONRPC", "HTTP+JSON"):
        assert seen[binding] == {
            "subscribe": ["task:TASK_STATE_WORKING", "artifact_update", "TASK_STATE_COMPLETED"],
            "send_streaming": ["task:TASK_STATE_SUBMITTED", "TASK_STATE_WORKING",
                               "artifact_update", "TASK_STATE_COMPLETED"]}, binding
