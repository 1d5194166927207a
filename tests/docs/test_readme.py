"""The README is short, its links lead somewhere, and what it tells a new user
to type runs as written: the calls after `make run`, and the agent it shows
served with `a2a-grpc serve --agent`."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.processes import ROOT, reap, start_server

README = (ROOT / "README.md").read_text()
SCRIPT = Path(sys.executable).parent / "a2a-grpc"  # what .venv/bin/a2a-grpc is under make


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README, re.S)


def commands(block: str) -> list[str]:
    """The block's commands, continuation lines joined, comments dropped."""
    joined = re.sub(r"\\\n\s*", "", block)
    lines = (line.split("  #")[0].strip() for line in joined.splitlines())
    return [line for line in lines if line and not line.startswith("#")]


def run(command: str, http_port: int, cwd: Path) -> str:
    """`command` as written, but for the port (the README's 8080) and, when the
    suite runs outside make's .venv, the script's path."""
    command = command.replace("localhost:8080", f"localhost:{http_port}")
    command = command.replace(".venv/bin/a2a-grpc", shlex.quote(str(SCRIPT)))
    done = subprocess.run(command, shell=True, cwd=cwd, capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, f"{command}\n{done.stdout}\n{done.stderr}"
    return done.stdout


def test_the_readme_is_short_and_its_links_lead_somewhere() -> None:
    assert len(README.splitlines()) <= 100
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", README):
        if "://" not in target:
            assert (ROOT / target).exists(), target


async def test_the_calls_after_make_run_run_as_written(tmp_path: Path) -> None:
    if shutil.which("curl") is None:
        pytest.skip("curl is not installed (apt-get install curl)")
    setup = commands(blocks("sh")[0])
    assert setup == ["make run", "make test"]
    # `make run` is `python -m a2a_grpc serve` with the default store (./a2a-grpc.db)
    server = await start_server("serve", cwd=tmp_path)
    try:
        sent, streamed = (run(c, server.http_port, ROOT) for c in commands(blocks("sh")[1]))
        assert json.loads(sent)["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
        assert "chunk 3/3" in streamed and streamed.strip().endswith(
            tuple(f"chunk {i}/3" for i in (1, 2, 3)))
        assert "completed" in streamed
    finally:
        await server.stop()
        reap(server.proc)
    assert (tmp_path / "a2a-grpc.db").exists()


async def test_the_agent_it_shows_serves(tmp_path: Path) -> None:
    [agent] = blocks("python")
    (tmp_path / "mymodule.py").write_text(agent)
    said = re.search(r"`(a2a-grpc serve --agent \S+)`", README)
    assert said is not None
    args = said.group(1).split()[1:]
    server = await start_server(*args, "--store", "memory", cwd=tmp_path, program=[str(SCRIPT)])
    try:
        out = run(".venv/bin/a2a-grpc send http://localhost:8080 hi --binding jsonrpc",
                  server.http_port, tmp_path)
    finally:
        await server.stop()
        reap(server.proc)
    assert "completed" in out and "you said: hi" in out
