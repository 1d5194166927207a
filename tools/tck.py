"""`make tck`: the official A2A conformance suite (a2aproject/a2a-tck) against
our server, and against the official SDK's server with the same agent profile,
side by side, on JSON-RPC, gRPC and REST, every category.

The suite is not fetched here: point A2A_TCK_DIR at a checkout of it (its
main branch). Its Python dependencies go into .interop/tck-venv on first use,
the official SDK into .interop/sdk-venv (PyPI, once). Results: a table per
server and binding on stdout, and docs/conformance.md rewritten with both
tables and every test that fails on either side.

Usage: python -m tools.tck [--only ours|sdk] [--bindings jsonrpc,grpc,rest]
       [--categories mandatory,capabilities,...] [--no-docs] [--carrier pyvoy]

`--carrier pyvoy`: ours as `serve --grpc-carrier pyvoy` (every binding on
the HTTP port; docs/grpc-carriers.md); the docs are left as they are.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from tools.kits import checkout, kit_venv

ROOT = Path(__file__).resolve().parents[1]
PEERS = ROOT / "tests" / "interop" / "peers"
DOC = ROOT / "docs" / "conformance.md"
BINDINGS = ("jsonrpc", "grpc", "rest")
# (category, the suite's folder, its marker expression): as its run_tck.py selects them.
CATEGORIES = {
    "mandatory": ("tests/mandatory/", "mandatory or mandatory_protocol"),
    "capabilities": ("tests/optional/capabilities/", None),
    "quality": ("tests/optional/quality/", None),
    "features": ("tests/optional/features/", None),
}
EQUIVALENCE: tuple[str, str | None] = ("tests/optional/multi_transport/",
                                       "transport_equivalence")
# Fixed ports: the card must advertise gRPC with a scheme for this suite (it
# parses the URL with urlparse), so the address is known before the start.
# Ours; the official SDK as it is; the SDK reading calls without A2A-Version as
# 1.0 (as ours does; as it is, it reads them as 0.3 and refuses them).
SERVERS = ("ours", "sdk", "sdk-1.0")
HTTP_PORT = int(os.environ.get("TCK_HTTP_PORT", "8180"))
GRPC_PORT = int(os.environ.get("TCK_GRPC_PORT", "50151"))


@dataclass
class Outcome:
    counts: dict[str, int] = field(default_factory=dict)
    failed: list[str] = field(default_factory=list)


def tck_dir() -> Path:
    return checkout("A2A_TCK_DIR", "tck", ["tests/mandatory"],
                    "git clone https://github.com/a2aproject/a2a-tck, branch main")


def tck_python(suite: Path) -> Path:
    return kit_venv("tck-venv", ["-e", str(suite)])


def sdk_python() -> Path:
    sys.path.insert(0, str(ROOT))
    from tests.interop.envs import sdk_python as install

    return install()


@contextmanager
def server(which: str, carrier: str = "grpc.aio") -> Iterator[str]:
    """Our server or the SDK's, with the conformance profile, on the fixed ports."""
    public = f"http://localhost:{HTTP_PORT}"  # the suite flags 127.0.0.1 in a card
    grpc_port = HTTP_PORT if carrier == "pyvoy" else GRPC_PORT  # pyvoy: one port
    if which == "ours":
        cmd = [sys.executable, "-m", "a2a_grpc", "serve", "--store", "memory",
               "--agent", "a2a_grpc.demos.conformance:ConformanceAgent",
               "--grpc-port", str(GRPC_PORT), "--http-port", str(HTTP_PORT),
               "--grpc-carrier", carrier,
               "--public-url", public, "--grpc-public-address", f"grpc://localhost:{grpc_port}",
               "--allow-http-push", "--allow-push-to", "localhost",
               "--allow-push-to", "127.0.0.1", "--grace", "0", "--log-level", "WARNING"]
    else:
        cmd = [str(sdk_python()), str(PEERS / "sdk_conformance.py"), str(HTTP_PORT),
               str(GRPC_PORT)]
    env = {**os.environ, "SDK_VERSIONLESS_AS_1_0": "1" if which == "sdk-1.0" else "0"}
    log = tempfile.NamedTemporaryFile("w+", prefix=f"tck-{which}-", suffix=".log", delete=False)
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env=env)
    try:
        wait_for_card(public, proc, log.name)
        yield public
    finally:
        proc.terminate()
        proc.wait(20)
        print(f"  ({which} server log: {log.name})", flush=True)


def wait_for_card(base: str, proc: subprocess.Popen[bytes], log: str) -> None:
    import urllib.request

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            sys.exit(f"the server exited: see {log}")
        try:
            with urllib.request.urlopen(base + "/.well-known/agent-card.json", timeout=2):
                return
        except OSError:
            time.sleep(0.2)
    sys.exit(f"the server did not answer in 60 s: see {log}")


def run(suite: Path, python: Path, base: str, path: str, marks: str | None,
        transports: str) -> Outcome:
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        report = Path(f.name)
    cmd = [str(python), "-m", "pytest", path, f"--sut-url={base}", "--test-scope=all",
           "--tb=no", "-q", "-p", "no:cacheprovider", "--transports", transports,
           "--json-report", f"--json-report-file={report}"]
    if marks:
        cmd += ["-m", marks]
    subprocess.run(cmd, cwd=suite, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   timeout=1800, check=False)
    try:
        data = json.loads(report.read_text())
    except (OSError, ValueError):
        return Outcome({"error": 1}, [f"{path}: the suite produced no report"])
    finally:
        report.unlink(missing_ok=True)
    out = Outcome()
    for test in data.get("tests", []):
        outcome = test["outcome"]
        out.counts[outcome] = out.counts.get(outcome, 0) + 1
        if outcome in ("failed", "error"):
            out.failed.append(test["nodeid"])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=SERVERS)
    parser.add_argument("--bindings", default=",".join(BINDINGS))
    parser.add_argument("--categories", default=",".join([*CATEGORIES, "equivalence"]))
    parser.add_argument("--no-docs", action="store_true")
    parser.add_argument("--carrier", choices=("grpc.aio", "pyvoy"), default="grpc.aio",
                        help="what carries our gRPC (serve --grpc-carrier)")
    args = parser.parse_args()
    suite = tck_dir()
    python = tck_python(suite)
    bindings = [b for b in args.bindings.split(",") if b]
    categories = [c for c in args.categories.split(",") if c]
    results: dict[str, dict[tuple[str, str], Outcome]] = {}
    for which in SERVERS:
        if args.only and which != args.only:
            continue
        print(f"== {which}", flush=True)
        results[which] = {}
        with server(which, args.carrier if which == "ours" else "grpc.aio") as base:
            for category in categories:
                if category == "equivalence":
                    got = run(suite, python, base, *EQUIVALENCE, ",".join(bindings))
                    results[which][(category, "all")] = got
                    print(f"  {category:13} all      {fmt(got)}", flush=True)
                    for test in got.failed:
                        print(f"      failed: {test}", flush=True)
                    continue
                path, marks = CATEGORIES[category]
                for binding in bindings:
                    m = f"{marks} or mandatory_jsonrpc" if (
                        category == "mandatory" and binding == "jsonrpc") else marks
                    got = run(suite, python, base, path, m, binding)
                    results[which][(category, binding)] = got
                    print(f"  {category:13} {binding:8} {fmt(got)}", flush=True)
                    for test in got.failed:
                        print(f"      failed: {test}", flush=True)
    if not args.no_docs and len(results) == len(SERVERS) and args.carrier == "grpc.aio":
        write_doc(suite, results)
        print(f"wrote {DOC.relative_to(ROOT)}")


def fmt(o: Outcome) -> str:
    c = o.counts
    return (f"{c.get('passed', 0):3} passed {c.get('failed', 0) + c.get('error', 0):3} failed "
            f"{c.get('skipped', 0):3} skipped {c.get('xfailed', 0):3} xfailed")


def _figure(page: str, pattern: str) -> str:
    """A figure from another kit's page, as its last run wrote it."""
    found = re.search(pattern, (DOC.parent / page).read_text()) if (
        DOC.parent / page).exists() else None
    return found.group(0) if found else "not run yet"


def write_doc(suite: Path, results: dict[str, dict[tuple[str, str], Outcome]]) -> None:
    commit = subprocess.run(["git", "-C", str(suite), "log", "-1", "--format=%h %ad %s",
                             "--date=short"], capture_output=True, text=True).stdout.strip()
    commit = commit.replace("`", "'")
    tck10 = _figure("conformance-1.0-dev.md", r"MUST failures classed as ours: \d+")
    itk = _figure("itk.md", r"\d+ of \d+ scenarios pass")
    lines = ["# Conformance: the official A2A TCK", "",
             f"`make tck` on {time.strftime('%Y-%m-%d')}, suite a2aproject/a2a-tck at "
             f"{commit}. Ours: `a2a_grpc.demos.conformance:ConformanceAgent`; the official "
             "SDK: a2a-sdk 1.3 with the same agent profile (tests/interop/peers/"
             "sdk_conformance.py). Counts per category and binding: passed / failed / "
             "skipped / xfailed.", "",
             "The other kits, each with its page: the successor of this suite, branch 1.0-dev "
             f"(`make tck10`; {tck10}): [conformance-1.0-dev.md](conformance-1.0-dev.md); "
             "multi-hop traversals with the official SDKs' own agents, the integration test "
             f"kit (`make itk`; {itk}): [itk.md](itk.md).", "",
             "| category | binding | ours | official SDK | SDK, version-less as 1.0 |",
             "|---|---|---|---|---|"]
    keys = list(results["ours"])
    for key in keys:
        row = " | ".join(short(results[w].get(key, Outcome())) for w in SERVERS)
        lines.append(f"| {key[0]} | {key[1]} | {row} |")
    lines += ["", "## Failing tests",
              "", "Ours, and whether the SDK (version-less as 1.0) fails the same test:", ""]
    for key in keys:
        sdk = set(results["sdk-1.0"].get(key, Outcome()).failed)
        for test in sorted(results["ours"][key].failed):
            side = "the SDK fails it too" if test in sdk else "the SDK passes it"
            lines.append(f"- {key[0]} / {key[1]}: `{test}` ({side})")
    lines += ["", "Failing on the SDK (version-less as 1.0) only:", ""]
    for key in keys:
        ours = set(results["ours"][key].failed)
        for test in sorted(set(results["sdk-1.0"].get(key, Outcome()).failed) - ours):
            lines.append(f"- {key[0]} / {key[1]}: `{test}`")
    lines.append("")
    old = DOC.read_text() if DOC.exists() else ""
    notes = old[old.index("## Why they fail"):] if "## Why they fail" in old else ""
    DOC.write_text("\n".join(lines) + ("\n" + notes if notes else ""))


def short(o: Outcome) -> str:
    c = o.counts
    return (f"{c.get('passed', 0)} / {c.get('failed', 0) + c.get('error', 0)} / "
            f"{c.get('skipped', 0)} / {c.get('xfailed', 0)}")


if __name__ == "__main__":
    main()
