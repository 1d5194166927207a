"""The official a2a-sdk client against `a2a-grpc serve --api-keys`: given a key,
its own AuthInterceptor reads our card's securitySchemes and sends it; without
one it gets the SDK's error for a refused call, on all three bindings."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.interop.envs import run_peer
from tests.processes import reap, start_server

PEERS = Path(__file__).parent / "peers"
pytestmark = pytest.mark.interop


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON", "GRPC"])
async def test_the_official_client_with_and_without_a_key(
        sdk_python: Path, tmp_path: Path, binding: str) -> None:
    keys = tmp_path / "keys.txt"
    keys.write_text("alice:alice-secret\nbob:bob-secret\n")
    server = await start_server("serve", "--api-keys", str(keys))
    try:
        seen = await run_peer(str(sdk_python), str(PEERS / "sdk_auth_client.py"), server.url,
                              binding, "alice-secret", "bob-secret")
    finally:
        reap(server.proc)
    print(json.dumps(seen, indent=1), file=sys.stderr)
    assert seen["send"] == seen["own"] == "TASK_STATE_COMPLETED"
    assert seen["listed"] == 1
    assert seen["other"].startswith("TaskNotFoundError")
    refused = ("A2AClientError:gRPC Error UNAUTHENTICATED" if binding == "GRPC"
               else "A2AClientError:HTTP Error 401")
    assert seen["nobody"].startswith(refused), seen["nobody"]
