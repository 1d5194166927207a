"""The kit's side of `make itk` (tools/itk.py): run inside the kit's runner
virtualenv, in the kit's checkout, with the plan as JSON on stdin. It uses
the kit's own runner (testlib: cluster start, instruction building, checks),
and changes only how processes start: the Python agents from the virtualenvs
tools/itk.py made (the kit starts them with `uv run`, which would fetch their
SDKs from GitHub), ours as `a2a-grpc serve`, the notification server from
this virtualenv, and ports freed by stopping the processes started here (the
kit calls `fuser -k`). Logs go to .interop/itk-logs/. The last line printed
is the results, as JSON.

Only the standard library and the kit are imported here: this file runs in
the kit's environment, not ours.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

PLAN: dict[str, Any] = json.loads(sys.stdin.read())
KIT, ROOT = Path(PLAN["kit"]), Path(PLAN["root"])
LOGS = ROOT / ".interop" / "itk-logs"
sys.path.insert(0, str(KIT))

import test_suite  # type: ignore[import-not-found]  # noqa: E402  # the kit's, from its checkout
import testlib  # type: ignore[import-not-found]  # noqa: E402

STARTED: dict[int, subprocess.Popen[str]] = {}  # port -> the process that listens there


def _spawn(name: str, args: list[str], cwd: Path, ports: tuple[int, ...],
           env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    LOGS.mkdir(parents=True, exist_ok=True)
    log = (LOGS / f"{name}.log").open("a")
    proc = subprocess.Popen(args, cwd=cwd, stdout=log, stderr=subprocess.STDOUT, text=True,
                            env={**os.environ, **(env or {})})
    for port in ports:
        STARTED[port] = proc
    return proc


def _python_agent(sdk: str) -> Any:
    python, where = PLAN["pythons"][sdk], KIT / "agents" / "python" / sdk.split("_")[1]

    def launch(http_port: int, grpc_port: int) -> subprocess.Popen[str]:
        return _spawn(sdk, [python, "main.py", "--httpPort", str(http_port),
                            "--grpcPort", str(grpc_port)], where, (http_port, grpc_port))
    return launch


def _ours(http_port: int, grpc_port: int) -> subprocess.Popen[str]:
    return _spawn("current", [
        PLAN["ours"], "-m", "a2a_grpc", "serve", "--agent", "itk.agent:TraversalAgent",
        "--http-port", str(http_port), "--grpc-port", str(grpc_port), "--store", "memory",
        "--jsonrpc-path", "/jsonrpc/", "--allow-push-to", "127.0.0.1", "--allow-http-push",
        "--no-inspector"], ROOT, (http_port, grpc_port), {"PYTHONPATH": str(ROOT)})


def _clean_ports(*ports: int) -> None:
    for port in ports:
        proc = STARTED.pop(port, None)
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()


def _healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as r:
            return bool(r.status == 200)
    except OSError:
        return False


async def _notifications(port: int, test_name: str) -> subprocess.Popen[str]:
    proc = _spawn(f"notifications-{test_name}", [
        PLAN["runner"], "-m", "uvicorn", "notifications_app:create_notifications_app",
        "--factory", "--host", "127.0.0.1", "--port", str(port)], KIT, (port,))
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if await asyncio.to_thread(_healthy, port):
            return proc
        await asyncio.sleep(0.2)
    raise RuntimeError(f"the kit's notification server did not start on port {port}")


async def main() -> dict[str, Any]:
    for sdk in ("python_v10", "python_v03"):
        test_suite._AGENT_DEFS[sdk]["launcher"] = _python_agent(sdk)
    test_suite._AGENT_DEFS["current"]["launcher"] = _ours
    testlib._clean_ports = _clean_ports
    testlib.start_notification_server = _notifications
    scenarios = PLAN["scenarios"]
    sdks = sorted({sdk for s in scenarios for sdk in s["sdks"]})
    procs, _uris, ports = await testlib.start_itk_cluster(sdks)
    results: dict[str, Any] = {}
    try:
        for s in scenarios:
            print(f"itk: {s['name']}...", file=sys.stderr, flush=True)
            try:
                got = await testlib.execute_itk_test(
                    sdks=s["sdks"], behavior=s["behavior"], edges=s["edges"],
                    scenario_name=s["name"], protocols=s["protocols"],
                    streaming=s["streaming"])
                passed = all(r["passed"] for r in got.values())
                why = "" if passed else "the trace came back incomplete"
            except Exception as exc:  # the kit raises for a failed call
                passed, why = False, f"{type(exc).__name__}: {exc}"[:200]
            results[s["name"]] = {**s, "passed": passed, "why": why}
            print(f"itk: {s['name']}: {'pass' if passed else 'FAIL ' + why}", file=sys.stderr,
                  flush=True)
    finally:
        testlib.stop_itk_cluster(procs, ports)
    return results


if __name__ == "__main__":
    LOGS.mkdir(parents=True, exist_ok=True)
    logging.basicConfig(filename=LOGS / "kit.log", level=logging.INFO,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    print(json.dumps(asyncio.run(main())))
