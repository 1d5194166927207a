"""Peers we did not write, installed in their own environments on first use.

The official a2a-sdk lives in its own virtualenv under .interop/
(tools/kits.py) and runs as a subprocess, as a peer does (side by side in
one process is tests/packaging/test_side_by_side.py); Node's grpc-js lives
in .interop/node. Installing needs PyPI or
npm the first time; later runs reuse what is there. Used by the interop
tests' fixtures and by `make bench`.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from tools.kits import INTEROP, InstallFailed, one_maker, venv_with

# The official SDK with its gRPC client, its HTTP server (for the reference server peer)
# and its SQL task store (SQLite, PostgreSQL: the durable benchmarks).
SDK_PACKAGES = ("a2a-sdk[grpc,http-server,signing,sqlite,postgresql]==1.3.0", "uvicorn>=0.30")
SDK_SPEC = " ".join(SDK_PACKAGES)
# The 0.3 line of the official SDK, for the A2A 0.3 clients most deployments still run.
SDK03_PACKAGES = ("a2a-sdk[http-server,grpc]==0.3.26", "uvicorn>=0.30")  # uvicorn: its server peer
NODE_PACKAGES = ("@grpc/grpc-js@1.14.7", "@grpc/proto-loader@0.8.1",
                 # The official JS SDK (its gRPC client transport) and its protobuf runtime.
                 "@a2a-js/sdk@1.3.0", "@bufbuild/protobuf@2.17.0")


class Unavailable(Exception):
    """A peer could not be installed; the message says what failed."""


def sdk_python() -> Path:
    """Python of a virtualenv holding the official SDK ({SDK_SPEC})."""
    return _venv("sdk-venv", SDK_PACKAGES)


def sdk03_python() -> Path:
    """Python of a virtualenv holding the official SDK's 0.3 line."""
    return _venv("sdk03-venv", SDK03_PACKAGES)


def _venv(name: str, packages: tuple[str, ...]) -> Path:
    try:
        return venv_with(name, packages)
    except InstallFailed as exc:
        raise Unavailable(str(exc)) from None


def node_modules() -> Path:
    """node_modules holding grpc-js, proto-loader and @a2a-js/sdk (npm, first run only)."""
    home = INTEROP / "node"
    stamp = home / "installed.txt"
    wanted = " ".join(NODE_PACKAGES)
    if stamp.exists() and stamp.read_text() == wanted:
        return home / "node_modules"
    if shutil.which("node") is None or shutil.which("npm") is None:
        raise Unavailable("Node.js is unavailable: node and npm are not on PATH "
                          "(apt-get install nodejs npm)")
    with one_maker("node"):
        if stamp.exists() and stamp.read_text() == wanted:
            return home / "node_modules"
        home.mkdir(parents=True, exist_ok=True)
        print(f"\ninstalling {wanted} into {home} (first run only)...", file=sys.stderr)
        done = subprocess.run(["npm", "install", "--prefix", str(home), "--no-audit",
                               "--no-fund", "--silent", *NODE_PACKAGES],
                              capture_output=True, text=True, timeout=600, check=False)
        if done.returncode != 0:
            raise Unavailable(f"grpc-js from npm is unavailable: {done.stderr[-2000:]}")
        stamp.write_text(wanted)
    return home / "node_modules"


async def run_peer(*cmd: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    """Run a peer (a client we did not write, driven by a script of ours) to its
    end; what it printed, as the JSON object it prints. A failing peer fails
    the test with the end of its stderr."""
    import asyncio
    import json

    proc = await asyncio.create_subprocess_exec(
        *cmd, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode == 0, err.decode()[-3000:]
    seen: dict[str, Any] = json.loads(out)
    return seen
