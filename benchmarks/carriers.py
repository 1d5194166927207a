"""`make bench-carriers`: gRPC carried by HTTP/2 servers other than grpc.aio,
on the ceiling's work (benchmarks/ceiling_asgi_grpc.py as an ASGI app) against
grpc.aio's own ceiling; and ours on each carrier it ships (`serve`, and
`serve --grpc-carrier pyvoy`), on the memory store and the SQLite default,
beside the JS SDK's gRPC server. One load generator (grpc.aio stubs, every
answer checked); servers pinned to CPU 0, the load to CPU 1, rounds
interleaved.

    make bench-carriers ARGS="--rounds 5 --seconds 2.5"

The carriers that are not this project's dependencies (pyvoy, with Envoy in
its wheel; granian) are installed into .interop/carriers-venv on the first
run, beside the project itself (the ceiling's code imports its protos); one
that cannot be installed, started, or that answers a grpc.aio client wrongly
(granian: no trailers) is left out, saying why.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile

import grpc

from a2a_grpc.generated import a2a_pb2 as pb
from tools.kits import kit_venv

from . import drive
from .measure import progress
from .report import Row, _f
from .servers import ROOT, Server, js_modules, pin

ROWS = [Row("SendMessage", "gRPC", 32), Row("GetTask", "gRPC", 32)]
JSONRPC = Row("SendMessage", "JSON-RPC", 32)  # ours and the JS SDK: the other face pyvoy carries
CARRIERS = ("pyvoy==1.3.0", "granian==2.8.9", "uvloop>=0.19", str(ROOT))


class Carrier(Server):
    """A server of this run started by its own command line."""

    argv: list[str]

    def __post_init__(self) -> None:
        super().__post_init__()
        self.http = self.grpc  # one port: gRPC's

    def command(self) -> list[str]:
        return [arg.replace("PORT", str(self.grpc)) for arg in self.argv]


def carriers(python: str) -> list[Carrier]:
    app = "benchmarks.ceiling_asgi_grpc:app"
    bin_dir = os.path.dirname(python)
    made = {  # label: (the module it needs, its command line)
        "hypercorn (h2, Python)": ("hypercorn", [  # a dependency of the bench: ours
            sys.executable, "-m", "hypercorn", app, "--bind", "127.0.0.1:PORT", "--worker-class",
            "uvloop", "--log-level", "warning"]),
        "granian (hyper, Rust)": ("granian", [
            python, "-m", "granian", "--interface", "asgi", "--http", "2", "--host",
            "127.0.0.1", "--port", "PORT", "--log-level", "warning", app]),
        "pyvoy (Envoy)": ("pyvoy", [
            os.path.join(bin_dir, "pyvoy"), "--address", "127.0.0.1", "--port", "PORT",
            "--loop", "uvloop", "--log-level", "warning", app]),
    }
    out = []
    for label, (module, argv) in made.items():
        where = sys.executable if module == "hypercorn" else python
        if subprocess.run([where, "-c", f"import {module}"], capture_output=True).returncode:
            progress(f"{label}: {module} is not installed in {where}, left out")
            continue
        c = Carrier("carrier", label=label)
        c.argv = argv
        out.append(c)
    return out


PYVOY = ["--grpc-carrier", "pyvoy"]


def ours(folder: str) -> list[Server]:
    """Ours on grpc.aio and on pyvoy (when its extra is installed here), each
    on the memory store and the SQLite default; the JS SDK beside them."""
    made = []
    carried = subprocess.run([sys.executable, "-c", "import pyvoy"],
                             capture_output=True).returncode == 0
    if not carried:
        progress("ours on pyvoy: pyvoy is not installed here (a2a-grpc[pyvoy]), left out")
    for store, named in (("memory", "memory"), (f"sqlite:///{folder}/STORE.db", "SQLite")):
        for carrier, extra in (("grpc.aio", []), ("pyvoy", PYVOY))[:2 if carried else 1]:
            label = f"ours, {carrier}, {named}"
            made.append(Server("ours", store=store.replace("STORE", carrier), label=label,
                               extra=extra))
    made.append(Server("js", env={"NODE_PATH": str(js_modules())}, label="JS SDK (memory)"))
    for s in made:
        if s.extra == PYVOY:
            s.grpc = s.http  # one port for every binding
    return made


async def main(rounds: int, seconds: float, python: str, folder: str) -> None:
    pin(1)
    ceiling = Server("ceiling", label="grpc.aio (ceiling)")
    servers: list[Server] = [ceiling, *carriers(python), *ours(folder)]
    started: list[Server] = []
    for s in servers:
        s.start()
        try:
            s.wait_ready(timeout=30)
            started.append(s)
        except (RuntimeError, TimeoutError) as exc:
            progress(f"{s.label}: did not start ({exc}), left out")
            s.stop()
    rates: dict[tuple[str, Row], list[float]] = {}
    errors: dict[tuple[str, Row], int] = {}
    try:
        ids: dict[str, str] = {}
        for s in list(started):
            rpc = drive.Grpc(s.grpc)
            try:  # the gRPC wire exactly, or it is left out (saying why)
                sent = await rpc.stub.SendMessage(pb.SendMessageRequest(
                    message=drive.message_pb("hello")), metadata=drive.GRPC_VERSION)
                ids[s.label] = sent.task.id
            except grpc.aio.AioRpcError as exc:
                progress(f"{s.label}: left out, its gRPC answer fails a grpc.aio client: "
                         f"{exc.code().name} {exc.details()}")
                started.remove(s)
                s.stop()
            finally:
                await rpc.close()
        for r in range(rounds + 1):
            for row in [*ROWS, JSONRPC]:
                for s in started:
                    if row is JSONRPC and s.name not in ("ours", "js"):
                        continue  # the ceilings here speak gRPC only
                    rpc = drive.Grpc(s.grpc)
                    make = (drive.Http(s.http).jsonrpc_send if row is JSONRPC else rpc.send
                            if row.scenario == "SendMessage" else
                            (lambda rpc=rpc, s=s: rpc.get(ids[s.label])))
                    res = await drive.load(make, seconds if r else 0.5, row.concurrency)
                    await rpc.close()
                    if r:
                        rates.setdefault((s.label, row), []).append(res.rate)
                        errors[(s.label, row)] = errors.get((s.label, row), 0) + res.errors
                        progress(f"round {r}/{rounds} {row.title} {s.label}: "
                                 f"{res.rate:,.0f}/s, errors {res.errors}, loadgen "
                                 f"{res.loadgen_cpu:.0%}")
    finally:
        for s in started:
            s.stop()
    print(render(started, rates, errors, rounds))


def render(started: list[Server], rates: dict[tuple[str, Row], list[float]],
           errors: dict[tuple[str, Row], int], rounds: int) -> str:
    """Two tables: the ceilings by carrier, and ours beside the JS SDK."""
    def median(label: str, row: Row) -> float | None:
        got = rates.get((label, row))
        return statistics.median(got) if got else None

    def cell(s: Server, row: Row, base: float | None) -> list[str]:
        m = median(s.label, row)
        if m is None:
            return ["-", "-"]
        return [f"{_f(m)} ({errors[(s.label, row)]})", f"{m / base:.2f}x" if base else "-"]

    ceilings = [s for s in started if s.name in ("ceiling", "carrier")]
    mine = [s for s in started if s not in ceilings]
    base = {row: median(ceilings[0].label, row) for row in ROWS} if ceilings else {}
    lines = [f"\ngRPC, 32 calls in flight on one channel; medians of {rounds} interleaved "
             "rounds; errors in brackets.\n",
             "The ceiling's work, by carrier:\n",
             "| carrier | SendMessage /s | vs grpc.aio | GetTask /s | vs grpc.aio |",
             "|---|---|---|---|---|"]
    for s in ceilings:
        lines.append(f"| {s.label} | " + " | ".join(
            c for row in ROWS for c in cell(s, row, base.get(row))) + " |")
    js = next((s.label for s in mine if s.name == "js"), None)
    if mine:
        lines += ["", "Ours by carrier and store, and the JS SDK:\n",
                  "| server | SendMessage /s | vs JS SDK | GetTask /s | vs JS SDK | "
                  "JSON-RPC SendMessage /s | vs JS SDK |", "|---|---|---|---|---|---|---|"]
        for s in mine:
            lines.append(f"| {s.label} | " + " | ".join(
                c for row in [*ROWS, JSONRPC]
                for c in cell(s, row, median(js, row) if js else None)) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=2.5)
    args = parser.parse_args()
    os.chdir(ROOT)
    python = str(kit_venv("carriers-venv", CARRIERS))
    with tempfile.TemporaryDirectory() as folder:
        asyncio.run(main(args.rounds, args.seconds, python, folder))
