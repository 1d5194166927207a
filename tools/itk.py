"""`make itk`: the A2A integration test kit (a2aproject/a2a-itk) with our agent
(itk/agent.py) among the official SDKs' agents: multi-hop traversals, chains
and stars, over JSON-RPC, gRPC and HTTP+JSON, blocking, streaming, with push
notifications and with a hang-up and a resubscribe.

Nothing is fetched from GitHub: A2A_ITK_DIR names a checkout of the kit. Its
agents run from it as the kit runs them, but from virtualenvs made here with
pip (the kit pins its Python agents' SDKs to GitHub tags; the same releases
come from PyPI): .interop/itk-runner (the kit's runner and notification
server), .interop/itk-python-v10 (a2a-sdk 1.0.3), .interop/itk-python-v03
(a2a-sdk 0.3.24). The TypeScript agents' packages are installed with npm on
first use, in the checkout (without their devDependencies). The Go, Java and
Rust agents are not run (Debian's Go is older than theirs; no Java or Rust SDK
agent is built here): the report says so. Ours is
`a2a-grpc serve --agent itk.agent:TraversalAgent`, the kit's "current" agent.

The scenarios (SCENARIOS) are the kit's own kinds, with ours as the first
agent, the one the kit's runner calls. tools/itk_kit.py runs them inside the
runner's virtualenv (it imports the kit's testlib); the results are written
to docs/itk.md as a matrix.

Usage: python -m tools.itk [--only NAME] [--no-docs]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tools.kits import INTEROP, checkout, kit_venv

ROOT = Path(__file__).resolve().parents[1]

DOC = ROOT / "docs" / "itk.md"
RESULTS = INTEROP / "itk-logs" / "results.json"  # the last full run's
ENVS: dict[str, tuple[str, ...]] = {
    "itk-runner": ("httpx>=0.27", "httpx-sse>=0.4", "protobuf>=5", "fastapi>=0.110",
                   "uvicorn>=0.29", "grpcio>=1.60"),
    "itk-python-v10": ("a2a-sdk[grpc,http-server,sqlite]==1.0.3", "fastapi", "uvicorn",
                       "grpcio", "grpcio-tools", "protobuf", "sse-starlette", "httpx-sse",
                       "packaging"),
    "itk-python-v03": ("a2a-sdk[grpc,http-server]==0.3.24", "httpx>=0.27", "fastapi",
                       "uvicorn", "grpcio", "click"),
}
ALL = ["jsonrpc", "grpc", "http_json"]
PEERS = ["python_v10", "python_v03", "ts_v10", "ts_v03"]


def _scenario(name: str, sdks: list[str], edges: list[str], protocol: str, behavior: str,
              streaming: bool = False) -> dict[str, Any]:
    kind = behavior + ("-streaming" if streaming else "")
    return {"name": f"{name}-{kind}-{protocol}", "sdks": sdks, "protocols": [protocol],
            "edges": edges, "streaming": streaming, "behavior": behavior}


BEHAVIORS = [("send_message", False), ("send_message", True), ("push_notification", False),
             ("resubscribe", True)]


def _peers(protocol: str) -> list[str]:
    """Every peer, but the JS 0.3 agent off JSON-RPC (KNOWN: the pairs show why)."""
    return PEERS if protocol == "jsonrpc" else [p for p in PEERS if p != "ts_v03"]


def _star(n: int) -> list[str]:
    return [e for i in range(1, n + 1) for e in (f"0->{i}", f"{i}->0")]


def _chain(n: int) -> list[str]:
    return [f"{i}->{i + 1}" for i in range(n)] + [f"{n}->0"]


# Ours with each peer both ways (0 -> 1 -> 0), per binding and behavior; then a
# star with ours at the hub and a chain through every agent, per binding.
SCENARIOS: list[dict[str, Any]] = [
    *(_scenario(f"current-{peer}", ["current", peer], ["0->1", "1->0"], protocol, behavior,
                streaming)
      for peer in PEERS for behavior, streaming in BEHAVIORS for protocol in ALL),
    *(_scenario("star", ["current", *_peers(p)], _star(len(_peers(p))), p, "send_message")
      for p in ALL),
    *(_scenario("chain", ["current", *_peers(p)], _chain(len(_peers(p))), p, "send_message")
      for p in ALL),
]

# Failures whose cause is known and not ours to fix: (agent, binding) -> why.
KNOWN = {
    ("ts_v03", "grpc"): "the official 0.3 SDKs disagree on a file part's bytes over gRPC and "
    "HTTP+JSON: the Python SDK puts the content's base64 text in `file_with_bytes`, the JS SDK "
    "the content itself, and neither reads the other's. Ours writes what the Python SDK reads "
    "(legacy/proto03.py; it reads both), so the JS 0.3 agent cannot read the instruction it is "
    "sent there; on JSON-RPC it reads ours",
}
KNOWN[("ts_v03", "http_json")] = KNOWN[("ts_v03", "grpc")]


def kit_dir() -> Path:
    return checkout("A2A_ITK_DIR", "itk", ["testlib.py", "protos/instruction.proto"],
                    "git clone https://github.com/a2aproject/a2a-itk")


def env_python(name: str) -> Path:
    """A virtualenv of ENVS[name], made on first use."""
    return kit_venv(name, ENVS[name])


def node_agents(kit: Path) -> None:
    """Install the TypeScript agents' packages as the kit would on first use, but
    without its devDependencies (code generators for files it already holds; one
    of the pinned versions is not on the registry)."""
    for version in ("v10", "v03"):
        where = kit / "agents" / "ts" / version
        if not (where / "node_modules").exists():
            print(f"npm install in {where} (first run only)...", flush=True)
            subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--omit=dev"],
                           cwd=where, check=True, stdout=subprocess.DEVNULL)


def _cell(results: dict[str, dict[str, Any]], peer: str, protocol: str) -> str:
    runs = [r for r in results.values()
            if r["sdks"] == ["current", peer] and r["protocols"] == [protocol]]
    return f"{sum(1 for r in runs if r['passed'])}/{len(runs)}" if runs else "-"


def explain(result: dict[str, Any]) -> str:
    for (agent, protocol), why in KNOWN.items():
        if agent in result["sdks"] and protocol in result["protocols"]:
            return f"known: {why}"
    return str(result.get("why") or "see .interop/itk-logs/kit.log")


def write_doc(results: dict[str, dict[str, Any]], kit: Path) -> None:
    commit = subprocess.run(["git", "-C", str(kit), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True, check=False).stdout.strip()
    passed = sum(1 for r in results.values() if r["passed"])
    lines = [
        "# Multi-hop interoperability: the A2A integration test kit",
        "",
        "Written by `make itk` (tools/itk.py); do not edit by hand.",
        "",
        f"The kit ([a2aproject/a2a-itk](https://github.com/a2aproject/a2a-itk) at {commit or '?'}) "
        "sends one nested instruction to the first agent; each agent reads the next one's card, "
        "calls it over the scenario's binding with the rest, and the answers unwind back (or "
        "arrive as push notifications). Ours is `itk/agent.py` on this project's server and "
        "client (the kit's \"current\" agent, always the first); the others are the kit's own "
        "agents on the official SDKs: Python 1.0.3 and 0.3.24, TypeScript @a2a-js/sdk 1.0 "
        "beta and 0.3. Go, Java and Rust agents are not run here (Debian's Go is older than "
        "theirs; no JDK or Rust SDK build).",
        "",
        f"**{passed} of {len(results)} scenarios pass**; each failure says why.",
        "",
        "Ours with each agent, both ways (scenarios passed of those run, over the four "
        "behaviors: send, streamed send, push notifications, hang-up and resubscribe):",
        "",
        "| with | " + " | ".join(ALL) + " |",
        "|---|" + "---|" * len(ALL),
        *(f"| {peer} | " + " | ".join(_cell(results, peer, p) for p in ALL) + " |"
          for peer in PEERS),
        "",
        "Every scenario:",
        "",
        "| scenario | agents | bindings | behavior | result |",
        "|---|---|---|---|---|",
    ]
    for name, r in results.items():
        lines.append(f"| {name} | {', '.join(r['sdks'])} | {', '.join(r['protocols'])} | "
                     f"{r['behavior']}{' (streaming)' if r['streaming'] else ''} | "
                     f"{'pass' if r['passed'] else 'FAIL: ' + explain(r)} |")
    lines += ["", "Reproduce: `A2A_ITK_DIR=../a2a-itk make itk` (docs/conformance.md).", ""]
    DOC.write_text("\n".join(lines))
    print(f"wrote {DOC.relative_to(ROOT)}")


def main() -> None:
    parser = argparse.ArgumentParser(prog="make itk")
    parser.add_argument("--only", action="append", help="run only this scenario (repeatable)")
    parser.add_argument("--no-docs", action="store_true", help="do not rewrite docs/itk.md")
    parser.add_argument("--doc-only", action="store_true",
                        help="rewrite docs/itk.md from the last run's results")
    args = parser.parse_args()
    kit = kit_dir()
    if args.doc_only:
        write_doc(json.loads(RESULTS.read_text()), kit)
        return
    runner = env_python("itk-runner")
    node_agents(kit)
    agents = {name: env_python(f"itk-{name.replace('_', '-')}")
              for name in ("python_v10", "python_v03")}
    scenarios = [s for s in SCENARIOS if not args.only or s["name"] in args.only]
    plan = {"kit": str(kit), "root": str(ROOT), "ours": sys.executable,
            "pythons": {k: str(v) for k, v in agents.items()}, "runner": str(runner),
            "scenarios": scenarios}
    done = subprocess.run([str(runner), str(ROOT / "tools" / "itk_kit.py")],
                          input=json.dumps(plan), text=True,
                          stdout=subprocess.PIPE, cwd=kit, check=False)
    if done.returncode != 0:
        sys.exit(f"make itk: the kit's run failed (exit {done.returncode})")
    results: dict[str, dict[str, Any]] = json.loads(done.stdout.strip().splitlines()[-1])
    if not args.only:
        RESULTS.write_text(json.dumps(results, indent=1))
    for name, r in results.items():
        print(f"{'pass' if r['passed'] else 'FAIL'}  {name}")
    if not args.no_docs and not args.only:
        write_doc(results, kit)
    if not all(r["passed"] for r in results.values()):
        sys.exit(1)


if __name__ == "__main__":
    main()
