"""`make tck10 ARGS=--sdk-sut`: the 1.0-dev kit against its own Python system
under test, an executor written for the official SDK (the kit's
sut/a2a-python/sut_agent.py, `TckAgentExecutor`), served twice: by the SDK's
own server (the script as the kit runs it) and by ours (`a2a-grpc serve
--agent sut_agent:TckAgentExecutor`, the same executor unchanged). Issue 64
asks that ours fail no requirement the SDK's server passes with it.

Both run from one virtualenv (.interop/tck10-sdk-sut: this checkout, a2a-sdk
1.x with its HTTP and gRPC servers); the kit runs from its own
(tools/tck10.py). docs/conformance-1.0-dev.md gets a section with both sets
of failing requirements, side by side.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

from tools.kits import kit_venv

ROOT = Path(__file__).resolve().parents[1]
# The kit's SUT is written for a2a-python before 1.0 was released (a2a.server.apps,
# gone in 1.0.0): the first 1.x pre-release on PyPI is the one it runs on.
SDK = "a2a-sdk[http-server,grpc,sqlite]==1.0.0a0"
# The card the SDK's script builds in main(): ours serves the same one (--card).
CARD = {"name": "A2A Python SDK System Under Test (SUT)",
        "description": "Auto-generated System Under Test for A2A TCK conformance",
        "version": "1.0.0",
        "provider": {"organization": "A2A Project", "url": "https://github.com/a2aproject"},
        "capabilities": {"streaming": True, "pushNotifications": False},
        "defaultInputModes": ["text"], "defaultOutputModes": ["text"],
        "skills": [{"id": "tck", "name": "TCK Conformance",
                    "description": "Handles TCK conformance test messages", "tags": ["tck"]}]}


def sut_python() -> Path:
    return kit_venv("tck10-sdk-sut", ["-e", f"{ROOT}[sdk]", SDK, "uvicorn", "starlette",
                                      "fastapi", "sse-starlette", "packaging"])


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait(proc: subprocess.Popen[bytes], log: Path, pattern: str) -> re.Match[str]:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if found := re.search(pattern, log.read_text(errors="replace")):
            return found
        time.sleep(0.1)  # a tool's wait for a log line; tests wait on events instead
    proc.kill()
    raise SystemExit(f"make tck10: the server did not start; its log: {log}")


def theirs(kit: Path, python: Path) -> tuple[subprocess.Popen[bytes], str]:
    """The SDK's own server running the kit's script, as the kit runs it."""
    http, grpc_port = _free_port(), _free_port()
    log = ROOT / ".interop" / "tck10-sdk-server.log"
    env = {**os.environ, "SUT_HOST": f"127.0.0.1:{http}", "GRPC_PORT": str(grpc_port)}
    with log.open("wb") as out:
        proc = subprocess.Popen([str(python), "sut_agent.py"], cwd=kit / "sut" / "a2a-python",
                                env=env, stdout=out, stderr=subprocess.STDOUT)
    _wait(proc, log, r"Uvicorn running on")
    return proc, f"http://127.0.0.1:{http}"


def ours(kit: Path, python: Path) -> tuple[subprocess.Popen[bytes], str]:
    """Our server running the same executor from the same file."""
    log = ROOT / ".interop" / "tck10-ours-sdk-server.log"
    card = ROOT / ".interop" / "tck10-sdk-card.json"
    card.write_text(json.dumps(CARD))
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [str(python), "-m", "a2a_grpc", "serve", "--agent", "sut_agent:TckAgentExecutor",
             "--card", str(card), "--store", "memory", "--grpc-port", "0", "--http-port", "0",
             "--card-format", "1.0", "--grace", "0"],
            cwd=kit / "sut" / "a2a-python", stdout=out, stderr=subprocess.STDOUT)
    found = _wait(proc, log, r"listening: gRPC on \S+, HTTP on ([\d.]+):(\d+)")
    return proc, f"http://{found.group(1)}:{found.group(2)}"


def section(kit_commit: str, sdk: dict[str, Any], ours_: dict[str, Any]) -> list[str]:
    """The docs section: each requirement either server fails, and by whom."""
    failed = sorted(set(sdk["failing"]) | set(ours_["failing"]))
    lines = [
        "## The kit's own SDK agent, on the SDK's server and on ours", "",
        f"The kit's Python system under test (sut/a2a-python/sut_agent.py at {kit_commit}): "
        f"an executor written for the official SDK ({sdk['version']}), run once by the "
        "SDK's own server as the kit runs it, once by `a2a-grpc serve --agent "
        "sut_agent:TckAgentExecutor` unchanged (tools/tck10_sdk.py). Both with a messageId "
        "per message (the kit's reuse set aside, as above: the SDK's server does not "
        "deduplicate messageIds, ours answers a repeated one with its first task).", "",
        f"SDK's server: {sdk['summary']}. Ours: {ours_['summary']}.", "",
        "| requirement | level | SDK's server | ours | class (ours) |", "|---|---|---|---|---|"]
    for rid in failed:
        level = (sdk["failing"].get(rid) or ours_["failing"].get(rid))["level"]
        why = ours_["failing"][rid]["class"] if rid in ours_["failing"] else ""
        lines.append(f"| {rid} | {level} | {'fails' if rid in sdk['failing'] else 'passes'} "
                     f"| {'fails' if rid in ours_['failing'] else 'passes'} | {why} |")
    worse = sorted(rid for rid, f in ours_["failing"].items()
                   if rid not in sdk["failing"] and f["class"] == "ours")
    lines += ["", "Failing on ours, not on the SDK's server, and not explained by the kit: "
              + (", ".join(worse) if worse else "none") + ".", ""]
    return lines


def compare(kit: Path, kit_python: Path, run_kit: Any, results: Any, doc: Path) -> list[str]:
    """The kit against both servers; the docs section rewritten; the requirements
    that fail on ours and not on the SDK's."""
    python = sut_python()
    version = subprocess.run([str(python), "-c", "import importlib.metadata as m; "
                              "print('a2a-sdk ' + m.version('a2a-sdk'))"],
                             capture_output=True, text=True, check=False).stdout.strip()
    seen: dict[str, dict[str, Any]] = {}
    for name, serve in (("sdk", theirs), ("ours", ours)):
        proc, base = serve(kit, python)
        try:
            run_kit(kit, kit_python, base, True)  # a messageId per message (tck10.py)
        finally:
            proc.terminate()
            proc.wait(15)
        tests, failing = results(kit)
        seen[name] = {"version": version,
                      "summary": ", ".join(f"{n} {k}" for k, n in sorted(tests.items())),
                      "failing": {f["id"]: f for f in failing}}
        print(f"\n{name}: {seen[name]['summary']}; failing: {sorted(seen[name]['failing'])}")
    commit = subprocess.run(["git", "-C", str(kit), "log", "-1", "--format=%h"],
                            capture_output=True, text=True, check=False).stdout.strip()
    new = section(commit or "an unknown commit", seen["sdk"], seen["ours"])
    text = doc.read_text()
    begin, end = text.find(new[0]), text.find("## How to run it")
    text = (text[:begin] if begin >= 0 else text[:end]) + "\n".join(new) + "\n" + text[end:]
    doc.write_text(text)
    return sorted(rid for rid, f in seen["ours"]["failing"].items()
                  if rid not in seen["sdk"]["failing"] and f["class"] == "ours")
