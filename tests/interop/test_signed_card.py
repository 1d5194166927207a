"""A signed card (`serve --card-keys`) verifies with the official a2a-sdk's
own verifier, and with our CLI (`card --verify`); a tampered one with neither."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest

from tests.interop.envs import run_peer
from tests.processes import reap, start_server

PEERS = Path(__file__).parent / "peers"
ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.interop


async def test_the_official_verifier_accepts_our_signature(
        sdk_python: Path, tmp_path: Path) -> None:
    server = await start_server("serve", "--store", "memory", "--card-keys", str(tmp_path))
    try:
        seen = await run_peer(str(sdk_python), str(PEERS / "sdk_verify_card.py"), server.url)
        ours = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "a2a_grpc", "card", server.url, "--verify", cwd=ROOT,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        out, err = await ours.communicate()
    finally:
        reap(server.proc)
    print(json.dumps(seen), file=sys.stderr)
    assert seen == {"verified": True, "signatures": 1, "tampered": "InvalidSignaturesError"}
    assert ours.returncode == 0, err.decode()
    assert "signature: valid (key " in out.decode()
    assert any(n.startswith("card-") for n in os.listdir(tmp_path))  # the key it made
