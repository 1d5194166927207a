"""`make bench-carriers`: gRPC carried by HTTP/2 servers other than grpc.aio,
on the ceiling's work (benchmarks/ceiling_asgi_grpc.py as an ASGI app) against
grpc.aio's own ceiling, from the same load generator (grpc.aio stubs, every
answer checked). Servers pinned to CPU 0, the load to CPU 1, rounds
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

import grpc

from a2a_grpc.generated import a2a_pb2 as pb
from tools.kits import kit_venv

from . import drive
from .measure import progress
from .report import Row, _f
from .servers import ROOT, Server, pin

ROWS = [Row("SendMessage", "gRPC", 32), Row("GetTask", "gRPC", 32)]
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


async def main(rounds: int, seconds: float, python: str) -> None:
    pin(1)
    ceiling = Server("ceiling", label="grpc.aio (ceiling)")
    servers: list[Server] = [ceiling, *carriers(python)]
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
            for row in ROWS:
                for s in started:
                    rpc = drive.Grpc(s.grpc)
                    make = rpc.send if row.scenario == "SendMessage" else (
                        lambda rpc=rpc, s=s: rpc.get(ids[s.label]))
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
    print(f"\ngRPC on the ceiling's work, 32 calls in flight on one channel; medians of "
          f"{rounds} interleaved rounds; errors in brackets.\n")
    print("| carrier | SendMessage /s | vs grpc.aio | GetTask /s | vs grpc.aio |")
    print("|---|---|---|---|---|")
    base = {row: statistics.median(rates[(ceiling.label, row)]) for row in ROWS
            if (ceiling.label, row) in rates}
    for s in started:
        cells = []
        for row in ROWS:
            got = rates.get((s.label, row))
            if not got:
                cells += ["-", "-"]
                continue
            m = statistics.median(got)
            cells += [f"{_f(m)} ({errors[(s.label, row)]})",
                      f"{m / base[row]:.2f}x" if base.get(row) else "-"]
        print(f"| {s.label} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=2.5)
    args = parser.parse_args()
    os.chdir(ROOT)
    python = str(kit_venv("carriers-venv", CARRIERS))
    asyncio.run(main(args.rounds, args.seconds, python))
