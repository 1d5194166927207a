"""Helpers for tests of what users install: the wheel built from the working
tree, fresh virtualenvs, `serve` run from them."""

from __future__ import annotations

import asyncio
import fcntl
import os
import shutil
import subprocess
import sys
import uuid
import venv
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from tests.processes import LISTENING
from tools.kits import installer

ROOT = Path(__file__).resolve().parents[2]
HEADERS = {"A2A-Version": "1.0"}


def run(*cmd: str | Path, cwd: Path) -> str:
    done = subprocess.run([str(c) for c in cmd], cwd=cwd, capture_output=True, text=True,
                          timeout=900, check=False)
    assert done.returncode == 0, f"{cmd} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


def checkout(into: Path) -> Path:
    """The repository's files as they are (committed or not, ignored ones left out,
    links kept): a build there can't pick up a stale build/ of the working tree."""
    listed = run("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard",
                  cwd=ROOT)
    for name in filter(None, listed.split("\0")):
        src, dst = ROOT / name, into / name
        if not src.exists() and not src.is_symlink():
            continue  # deleted in the working tree, not yet in the index
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_symlink():
            dst.symlink_to(os.readlink(src))
        else:
            shutil.copy2(src, dst)
    return into


def message() -> dict[str, object]:
    return {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": "hello"}]}


@asynccontextmanager
async def serving(python: Path, cwd: Path, *flags: str,
                  log: list[str] | None = None) -> AsyncIterator[tuple[int, int]]:
    """`python -m a2a_grpc serve FLAGS` in `cwd`, as (its gRPC port, its HTTP port);
    what it printed before it listened is added to `log`."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    proc = await asyncio.create_subprocess_exec(
        str(python), "-m", "a2a_grpc", "serve", "--grpc-port", "0", "--http-port", "0", *flags,
        cwd=cwd, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    try:
        assert proc.stdout is not None
        printed = [] if log is None else log
        while not (found := LISTENING.search(line := (await asyncio.wait_for(
                proc.stdout.readline(), 60)).decode())):
            printed.append(line)
            assert line, "serve exited:\n" + "".join(printed)
        grpc_port, http_port = (int(g) for g in found.groups())
        yield grpc_port, http_port
    finally:
        proc.kill()
        await proc.wait()


def once(factory: Any, name: str, make: Callable[[Path], str]) -> str:
    """What `make(folder)` makes, made once a test run: under pytest-xdist the
    first worker to ask makes it, and the others wait for it (a lock), then use
    it. `factory`: pytest's tmp_path_factory; `name`: the folder it is made in."""
    base: Path = factory.getbasetemp()
    run_dir = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base  # the run's own
    root = run_dir / "made-once"
    root.mkdir(exist_ok=True)
    made = root / f"{name}.made"
    with (root / f"{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if made.exists():
            return made.read_text()
        home = root / name
        shutil.rmtree(home, ignore_errors=True)
        home.mkdir()
        result = make(home)
        made.write_text(result)
        return result


def make_venv(home: Path, *requirements: str, pip: bool = False) -> Path:
    """The Python of a fresh virtualenv in `home` with `requirements` installed
    (by uv, or by the virtualenv's own pip, as most users install)."""
    venv.create(home / "venv", with_pip=True)
    python = home / "venv" / "bin" / "python"
    names = ", ".join(Path(r).name for r in requirements)
    print(f"\ninstalling {names} and their dependencies into {home / 'venv'}...",
          file=sys.stderr)
    how: list[str | Path] = ([python, "-m", "pip", "install", "-q", "--no-compile"] if pip
                             else [*installer(python)])
    run(*how, *requirements, cwd=home)
    return python
