"""BeeAI's `A2AServer` served by `serve --agent` as it is, from the installed
wheel, in a virtualenv of its own with `beeai-framework[a2a]` from PyPI (and
the a2a-sdk 0.3 it brings), around a scripted runnable (no model): the SDK's
0.3 client, given no card file on either side, sees on ours what it sees on
BeeAI's own server (tests/interop/peers/beeai_agent.py, sdk03_sees.py)."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

from tests.packaging.conftest import venv_of
from tests.packaging.framework_servers import cards_read, sdk03_sees, their_server
from tests.packaging.installed import ROOT, run, serving

PEERS = ROOT / "tests" / "interop" / "peers"


@pytest.fixture(scope="module")
def with_beeai(installed: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    return venv_of(tmp_path_factory, "sdk-beeai", str(installed[0]),
                   "beeai-framework[a2a]>=0.1.80")


async def test_beeai_server_is_served_as_beeai_serves_it(
        with_beeai: Path, with_sdk: Path, tmp_path: Path) -> None:
    shutil.copy(PEERS / "beeai_agent.py", tmp_path / "beeai_agent.py")
    async with their_server(with_beeai, "beeai_agent.py", tmp_path) as base:
        theirs = await sdk03_sees(with_beeai, tmp_path, base)
    async with serving(with_beeai, tmp_path, "--agent", "beeai_agent:server",
                       "--store", f"sqlite:///{tmp_path / 'tasks.db'}") as (_, port):
        ours = await sdk03_sees(with_beeai, tmp_path, f"http://127.0.0.1:{port}")
        # (the SDK's 0.3 client read it above; its 1.x client reads it too)
        [newer] = await cards_read(f"http://127.0.0.1:{port}", tmp_path, with_sdk)
    assert newer == {"name": "Scripted", "skills": ["Scripted"]}
    # BeeAI's executor answers with a direct message, and keeps the conversation
    # per context (the user's two messages and its own first answer).
    assert theirs["second"] == [{"kind": "message", "role": "agent", "task_id": True,
                                 "text": "beeai heard again (3 messages)"}], theirs
    assert theirs["card"] == {"name": "Scripted", "description": "Echoes, scripted",
                              "skills": [["Scripted", []]], "streaming": True}
    # The one difference (docs/official-sdk-agents.md): a direct reply names no
    # task on ours, where the SDK's server names one that never exists.
    for key in ("first", "second", "stream"):
        for event in theirs[key]:
            event["task_id"] = False
    assert ours == theirs
    assert "No broken requirements" in run(with_beeai, "-m", "pip", "check", cwd=tmp_path)


async def test_a_beeai_server_with_no_agent_is_refused_saying_why(with_beeai: Path,
                                                                  tmp_path: Path) -> None:
    (tmp_path / "empty_beeai.py").write_text(
        "from beeai_framework.adapters.a2a.serve.server import A2AServer\n"
        "server = A2AServer()\n")
    proc = await asyncio.create_subprocess_exec(
        str(with_beeai), "-m", "a2a_grpc", "serve", "--agent", "empty_beeai:server",
        "--http-port", "0", "--grpc-port", "0", cwd=tmp_path,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    out, _ = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode != 0
    assert "no agent registered" in out.decode(), out.decode()[-2000:]
