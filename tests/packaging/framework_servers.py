"""A framework's own server for the same agent ours serves (its script run
as `PYTHON SCRIPT PORT` in the framework's virtualenv, until the block ends),
and the card ours serves as the SDK's clients of both generations read it."""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp

from tests.packaging.installed import ROOT
from tests.processes import unused_port

PEERS = ROOT / "tests" / "interop" / "peers"


@asynccontextmanager
async def their_server(python: Path, script: str, cwd: Path) -> AsyncIterator[str]:
    """The server `script` starts, once its card answers; yields its base URL."""
    port = unused_port()
    proc = await asyncio.create_subprocess_exec(
        str(python), script, str(port), cwd=cwd,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    try:
        base = f"http://127.0.0.1:{port}"
        async with aiohttp.ClientSession() as http:
            for _ in range(600):  # until uvicorn answers (it need not say when it bound)
                try:
                    async with http.get(base + "/.well-known/agent-card.json") as resp:
                        if resp.status == 200:
                            break
                except aiohttp.ClientConnectionError:
                    if proc.returncode is not None:
                        said = await proc.stdout.read()  # type: ignore[union-attr]
                        raise AssertionError(f"{script} exited:\n"
                                             + said.decode()[-3000:]) from None
                    await asyncio.sleep(0.05)
            else:
                raise AssertionError(f"{script} did not answer on {base} within 30 s")
        yield base
    finally:
        if proc.returncode is None:
            proc.kill()
        await proc.wait()


async def cards_read(base: str, cwd: Path, *pythons: Path) -> list[dict[str, object]]:
    """The card at `base` as the SDK client of each virtualenv reads it
    (tests/interop/peers/read_card.py): one of a2a-sdk 0.3 and one of 1.x
    read what every client of theirs would."""
    shutil.copy(PEERS / "read_card.py", cwd / "read_card.py")
    seen = []
    for python in pythons:
        proc = await asyncio.create_subprocess_exec(
            str(python), "read_card.py", base, cwd=cwd,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        out, err = await asyncio.wait_for(proc.communicate(), 120)
        assert proc.returncode == 0, f"{python}: the card was refused:\n{err.decode()[-3000:]}"
        seen.append(json.loads(out))
    return seen


async def sdk03_sees(python: Path, cwd: Path, base: str) -> dict[str, Any]:
    """What the SDK's 0.3 client in `python`'s virtualenv sees of the agent at
    `base` (tests/interop/peers/sdk03_sees.py)."""
    shutil.copy(PEERS / "sdk03_sees.py", cwd / "sdk03_sees.py")
    proc = await asyncio.create_subprocess_exec(
        str(python), "sdk03_sees.py", base, cwd=cwd,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode == 0, err.decode()[-3000:]
    seen: dict[str, Any] = json.loads(out)
    return seen
