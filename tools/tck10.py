"""`make tck10`: the 1.0-dev conformance kit (a2aproject/a2a-tck, branch
1.0-dev: requirements by RFC 2119 level, a system-under-test agent driven by
messageId prefixes) against our server, with every failure classed.

Nothing is fetched: A2A_TCK10_DIR names a checkout of that branch. Its Python
dependencies go into .interop/tck10-venv on first use. The server is
`a2a-grpc serve --agent tools.tck_sut:TckSut` (the kit's scenarios, on the
public agent API) with a pure 1.0 card (the kit validates the card against a
strict 1.0 schema) and webhooks to loopback allowed (the kit's receiver).

Each failing requirement is classed by what its error says (KNOWN below):
the kit's own bug, the kit pinning spec v1.0.0 where v1.0.1 changed the rule,
or ours (anything not explained). docs/conformance-1.0-dev.md is rewritten.

Usage: python -m tools.tck10 [--no-docs]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

from tools.kits import checkout, kit_venv
from tools.tck10_sdk import compare

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "conformance-1.0-dev.md"
KIT, SPEC_VERSION, OURS = "the kit's", "the kit's spec version (v1.0.0)", "ours"

# (requirement, a regular expression its error matches) -> (class, why)
KNOWN: list[tuple[str, str, str, str]] = [
    ("CORE-SEND-003", r"content type .* is incompatible", KIT,
     "the server answers ContentTypeNotSupportedError, as the requirement asks, but the "
     "requirement declares no expected error, so the kit scores any error as a failed call"),
    ("JSONRPC-SSE-002", r"expected ContentTypeNotSupportedError .* got ParseError", KIT,
     "the test posts a Python repr (not JSON) as text/plain and expects -32005; "
     "ContentTypeNotSupportedError is about message parts' media types (spec §3.3.2), and a "
     "body that is not JSON is a JSON-RPC parse error (-32700)"),
    ("HTTP_JSON-SVC-001", r"Expected Content-Type application/json", SPEC_VERSION,
     "v1.0.1 §11.1: application/a2a+json SHOULD be used for HTTP+JSON requests and responses"),
    ("GRPC-ERR-002", r"VersionNotSupportedError \(UNIMPLEMENTED\)", SPEC_VERSION,
     "v1.0.1 §5.4 maps VersionNotSupportedError to FAILED_PRECONDITION (v1.0.0: UNIMPLEMENTED)"),
    ("*", r"messageId '[^']+' was already used", KIT,
     "the kit sends one messageId per scenario prefix for the whole session (tck_id), so a "
     "second message reuses the first's id; the spec has the sender make a messageId per "
     "message, and the server takes a repeated one as a retry of that send, refusing it for "
     "another task"),
    ("*", r"Expected task state 'TASK_STATE_INPUT_REQUIRED' but got 'TASK_STATE_CANCELED'", KIT,
     "the same reuse: the kit's second `tck-input-required` message carries the first one's "
     "messageId, so it is answered with that first task, which an earlier test canceled"),
]


def kit_dir() -> Path:
    return checkout("A2A_TCK10_DIR", "tck10", ["run_tck.py", "scenarios"],
                    "git clone -b 1.0-dev https://github.com/a2aproject/a2a-tck")


def kit_python(kit: Path) -> Path:
    return kit_venv("tck10-venv", ["-e", str(kit)])


def start_server(carrier: str = "grpc.aio") -> tuple[subprocess.Popen[bytes], str]:
    """Our server on free ports, its log in .interop/tck10-server.log; its HTTP
    base URL once it says it listens. `carrier`: serve --grpc-carrier."""
    log = ROOT / ".interop" / "tck10-server.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "a2a_grpc", "serve", "--agent", "tools.tck_sut:TckSut",
             "--store", "memory", "--grpc-port", "0", "--http-port", "0", "--card-format", "1.0",
             "--allow-push-to", "127.0.0.1", "--allow-push-to", "::1", "--allow-http-push",
             "--grace", "0", "--grpc-carrier", carrier], cwd=ROOT, stdout=out,
            stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and proc.poll() is None:
        found = re.search(r"listening: gRPC on \S+, HTTP on ([\d.]+):(\d+)", log.read_text())
        if found:
            return proc, f"http://{found.group(1)}:{found.group(2)}"
        time.sleep(0.1)  # a tool's wait for a log line; tests wait on events instead
    proc.kill()
    sys.exit(f"make tck10: the server did not start; its log: {log}")


def run_kit(kit: Path, python: Path, base: str, unique_ids: bool) -> None:
    """The kit as published, or (`unique_ids`) with a messageId per message."""
    print(f"running the kit against {base}{' with unique messageIds' if unique_ids else ''} "
          "(two minutes or so)...", flush=True)
    plugin = ["-p", "tools.tck10_unique_ids"] if unique_ids else []
    env = {**os.environ, "PYTHONPATH": str(ROOT)} if unique_ids else None
    subprocess.run([str(python), "run_tck.py", "--sut-host", base, "--",
                    "--webhook-host=127.0.0.1", "-p", "no:cacheprovider", *plugin],
                   cwd=kit, env=env, check=False)


def classify(requirement: str, errors: list[str]) -> tuple[str, str]:
    text = " ".join(errors)
    for rid, pattern, kind, why in KNOWN:
        if rid in ("*", requirement) and re.search(pattern, text):
            return kind, why
    return OURS, "not explained: look at it"


def results(kit: Path) -> tuple[Counter[str], list[dict[str, Any]]]:
    junit = ElementTree.parse(kit / "reports" / "junitreport.xml").getroot()
    tests: Counter[str] = Counter()
    for case in junit.iter("testcase"):
        kinds = [child.tag for child in case if child.tag in ("failure", "error", "skipped")]
        xfail = any(c.get("type") == "pytest.xfail" for c in case if c.tag == "skipped")
        tests["xfailed" if xfail else kinds[0] if kinds else "passed"] += 1
    report = json.loads((kit / "reports" / "compatibility.json").read_text())
    failing = []
    for rid, req in report["per_requirement"].items():
        if req["status"] == "FAIL":
            kind, why = classify(rid, req["errors"])
            failing.append({"id": rid, "level": req["level"], "transports": req["transports"],
                            "class": kind, "why": why, "error": (req["errors"] or [""])[0]})
    return tests, failing


Run = tuple[Counter[str], list[dict[str, Any]]]


def _table(run: Run) -> list[str]:
    tests, failing = run
    lines = ["Tests: " + ", ".join(f"{n} {k}" for k, n in sorted(tests.items())) + ".", "",
             "| requirement | level | class | why |", "|---|---|---|---|"]
    levels = ["MUST", "SHOULD", "MAY"]
    for f in sorted(failing, key=lambda f: (f["class"] != OURS, levels.index(f["level"]),
                                            f["id"])):
        lines.append(f"| {f['id']} | {f['level']} | {f['class']} | {f['why']} |")
    ours = [f for f in failing if f["class"] == OURS and f["level"] == "MUST"]
    return [*lines, "", f"MUST failures classed as ours: {len(ours)}.", ""]


def write_doc(kit: Path, published: Run, unique: Run) -> None:
    commit = subprocess.run(["git", "-C", str(kit), "log", "-1", "--format=%h %cs %s"],
                            capture_output=True, text=True, check=False).stdout.strip()
    lines = [
        "# Conformance: the 1.0-dev kit", "",
        f"`make tck10` on {time.strftime('%Y-%m-%d')}, a2aproject/a2a-tck branch 1.0-dev at "
        f"{commit or 'an unknown commit'}, against `a2a-grpc serve --agent tools.tck_sut:TckSut "
        "--card-format 1.0` (the kit's scenarios on the public agent API; tools/tck_sut.py).",
        "Requirements the kit scores as failed, each classed (tools/tck10.py says how).", "",
        "## The kit as published", "", *_table(published),
        "## With a messageId per message", "",
        "The same run with the kit's one fault set aside: tools/tck10_unique_ids.py gives each "
        "of its messages an id of its own (as the spec has it), so what the reuse hid runs: "
        "history, push delivery, cancel and subscribe.", "", *_table(unique),
        "## How to run it", "",
        "`git clone -b 1.0-dev https://github.com/a2aproject/a2a-tck ../tck10`, then "
        "`make tck10 A2A_TCK10_DIR=../tck10`: it runs the kit twice, as published and with "
        "unique messageIds, each against a fresh server, and rewrites this page; the kit's "
        "own reports of the last run are in its `reports/`.", ""]
    DOC.write_text("\n".join(lines))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--no-docs", action="store_true", help="do not rewrite the docs page")
    parser.add_argument("--carrier", choices=("grpc.aio", "pyvoy"), default="grpc.aio",
                        help="what carries our gRPC (serve --grpc-carrier); pyvoy: no docs")
    parser.add_argument("--sdk-sut", action="store_true",
                        help="the kit's own SDK executor, on the SDK's server and on ours "
                             "(tools/tck10_sdk.py)")
    args = parser.parse_args()
    kit = kit_dir()
    python = kit_python(kit)
    if args.sdk_sut:
        worse = compare(kit, python, run_kit, results, DOC)
        print(f"wrote {DOC.relative_to(ROOT)}")
        if worse:
            sys.exit(f"make tck10: failing on ours, not on the SDK's server: {worse}")
        return
    runs: list[Run] = []
    for unique_ids in (False, True):
        proc, base = start_server(args.carrier)  # a fresh server (and store) for each run
        try:
            run_kit(kit, python, base, unique_ids)
        finally:
            proc.terminate()
            proc.wait(15)
        runs.append(results(kit))
        tests, failing = runs[-1]
        print("\ntests:", dict(tests))
        for f in failing:
            print(f"{f['level']:6} {f['id']:18} {f['class']:34} {f['error'][:90]}")
    if not args.no_docs and args.carrier == "grpc.aio":
        write_doc(kit, runs[0], runs[1])
        print(f"wrote {DOC.relative_to(ROOT)}")
    if any(f["class"] == OURS and f["level"] == "MUST" for _, failing in runs for f in failing):
        sys.exit("make tck10: a MUST failure is classed as ours")


if __name__ == "__main__":
    main()
