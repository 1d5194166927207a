"""Side by side with the official SDK, over the wire (issue: speed).

Starts three servers, each pinned to CPU 0: ours (`a2a-grpc serve --store
memory`), the official a2a-sdk's reference server (its own virtualenv,
tests/interop/peers/sdk_server.py: the same echo/stream agent on Starlette and
its GrpcHandler) and the ceiling (benchmarks/ceiling.py: a fixed correct
answer, no work). The load generator is this process, pinned to CPU 1,
speaking only the wire protocol (aiohttp, and grpc stubs generated from our
proto; no SDK code). Every answer is checked: a wrong one counts as an error,
not throughput. Rounds alternate ours / SDK / ceiling; the tables give
medians (min-max) and ratios.

Run: `make bench-wire` (or `python -m benchmarks.wire --rounds 3 --seconds 3`).
Covered so far: unary SendMessage (JSON-RPC, REST, gRPC; concurrency 1 and
32), GetTask (JSON-RPC, gRPC), `stream 100` (JSON-RPC SSE, gRPC: events/s
and time to first event).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp
import grpc

from generated import a2a_pb2 as pb
from generated.a2a_pb2_grpc import A2AServiceStub
from tests.processes import free_port

ROOT = Path(__file__).resolve().parents[1]
SDK_PYTHON = ROOT / ".interop" / "sdk-venv" / "bin" / "python"


def _pin(cpu: int) -> Callable[[], None]:
    return lambda: os.sched_setaffinity(0, {cpu})


@dataclass
class Server:
    name: str
    http: int
    grpc: int
    proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        args = {
            "ours": [sys.executable, "-m", "a2a_grpc", "serve", "--store", "memory",
                     "--http-port", str(self.http), "--grpc-port", str(self.grpc),
                     "--log-level", "WARNING"],
            "sdk": [str(SDK_PYTHON), str(ROOT / "tests/interop/peers/sdk_server.py"),
                    str(self.http), str(self.grpc)],
            "ceiling": [sys.executable, "-m", "benchmarks.ceiling", str(self.http),
                        str(self.grpc)],
        }[self.name]
        self.proc = subprocess.Popen(args, cwd=ROOT, preexec_fn=_pin(0),
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(10)


@dataclass
class Result:
    rate: float  # per second (requests, or events for streams)
    p50_ms: float
    p99_ms: float
    errors: int
    loadgen_cpu: float  # share of one core the load generator used
    extra: dict[str, float] = field(default_factory=dict)


def _message(text: str) -> dict[str, object]:
    return {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": text}]}


def _check_send(body: dict[str, object]) -> bool:
    task = body.get("task", {})
    return (isinstance(task, dict) and task.get("status", {}).get("state") ==
            "TASK_STATE_COMPLETED" and "echo: hello" in json.dumps(task.get("artifacts")))


async def load(call: Callable[[], Awaitable[bool]], seconds: float, concurrency: int) -> Result:
    latencies: list[float] = []
    errors = 0
    deadline = time.perf_counter() + seconds

    async def worker() -> None:
        nonlocal errors
        while time.perf_counter() < deadline:
            start = time.perf_counter()
            try:
                ok = await call()
            except Exception:
                ok = False
            if ok:
                latencies.append(time.perf_counter() - start)
            else:
                errors += 1

    cpu0, wall0 = time.process_time(), time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    wall = time.perf_counter() - wall0
    latencies.sort()
    def pct(q: float) -> float:
        if not latencies:
            return float("nan")
        return latencies[min(len(latencies) - 1, int(len(latencies) * q))] * 1000

    return Result(len(latencies) / wall, pct(0.5), pct(0.99), errors,
                  (time.process_time() - cpu0) / wall)


def scenarios(server: Server, session: aiohttp.ClientSession,
              stub: A2AServiceStub) -> dict[str, Callable[[], Awaitable[bool]]]:
    base = f"http://127.0.0.1:{server.http}"
    headers = {"A2A-Version": "1.0"}
    known: dict[str, str] = {}

    async def jsonrpc_send() -> bool:
        async with session.post(base + "/", headers=headers, json={
                "jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                "params": {"message": _message("hello")}}) as resp:
            body = await resp.json(content_type=None)
        ok = _check_send(body.get("result", {}))
        if ok:
            known.setdefault("task", body["result"]["task"]["id"])
        return ok

    async def rest_send() -> bool:
        async with session.post(base + "/message:send", headers=headers,
                                json={"message": _message("hello")}) as resp:
            return _check_send(await resp.json(content_type=None))

    async def grpc_send() -> bool:
        resp = await stub.SendMessage(pb.SendMessageRequest(message=pb.Message(
            message_id=str(uuid.uuid4()), role=pb.ROLE_USER, parts=[pb.Part(text="hello")])),
            metadata=(("a2a-version", "1.0"),))
        return bool(resp.task.status.state == pb.TASK_STATE_COMPLETED and
                    resp.task.artifacts[0].parts[0].text == "echo: hello")

    async def jsonrpc_get() -> bool:
        async with session.post(base + "/", headers=headers, json={
                "jsonrpc": "2.0", "id": 2, "method": "GetTask",
                "params": {"id": known["task"]}}) as resp:
            body = await resp.json(content_type=None)
        return bool(body.get("result", {}).get("id") in (known["task"], "t"))

    async def grpc_get() -> bool:
        task = await stub.GetTask(pb.GetTaskRequest(id=known["task"]),
                                  metadata=(("a2a-version", "1.0"),))
        return task.id in (known["task"], "t")

    return {"SendMessage JSON-RPC": jsonrpc_send, "SendMessage REST": rest_send,
            "SendMessage gRPC": grpc_send, "GetTask JSON-RPC": jsonrpc_get,
            "GetTask gRPC": grpc_get}


async def stream_100(server: Server, session: aiohttp.ClientSession, stub: A2AServiceStub,
                     binding: str, seconds: float, concurrency: int = 4) -> Result:
    firsts: list[float] = []

    async def jsonrpc() -> bool:
        start = time.perf_counter()
        count = 0
        async with session.post(f"http://127.0.0.1:{server.http}/", headers={
                "A2A-Version": "1.0"}, json={"jsonrpc": "2.0", "id": 3,
                                            "method": "SendStreamingMessage",
                                            "params": {"message": _message("stream 100")}}
                ) as resp:
            async for line in resp.content:
                if line.startswith(b"data:"):
                    if count == 0:
                        firsts.append(time.perf_counter() - start)
                    count += 1
                    last = line
        return count >= 102 and b"TASK_STATE_COMPLETED" in last

    async def grpc_stream() -> bool:
        start = time.perf_counter()
        events: list[pb.StreamResponse] = []
        async for event in stub.SendStreamingMessage(pb.SendMessageRequest(message=pb.Message(
                message_id=str(uuid.uuid4()), role=pb.ROLE_USER,
                parts=[pb.Part(text="stream 100")])), metadata=(("a2a-version", "1.0"),)):
            if not events:
                firsts.append(time.perf_counter() - start)
            events.append(event)
        return len([e for e in events if e.HasField("artifact_update")]) == 100

    result = await load(jsonrpc if binding == "jsonrpc" else grpc_stream, seconds, concurrency)
    result.rate *= 102  # events per second (task, working, 100 chunks, ... completed)
    result.extra["first_event_ms"] = statistics.median(firsts) * 1000 if firsts else float("nan")
    return result


async def run(rounds: int, seconds: float) -> str:
    os.sched_setaffinity(0, {1})
    servers = [Server(n, free_port(), free_port()) for n in ("ours", "sdk", "ceiling")]
    for s in servers:
        s.start()
    await asyncio.sleep(4)
    table: dict[tuple[str, int], dict[str, list[Result]]] = {}
    plan = [("SendMessage JSON-RPC", 1), ("SendMessage JSON-RPC", 32), ("SendMessage REST", 32),
            ("SendMessage gRPC", 1), ("SendMessage gRPC", 32), ("GetTask JSON-RPC", 32),
            ("GetTask gRPC", 32), ("stream 100 JSON-RPC", 4), ("stream 100 gRPC", 4)]
    try:
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=64)) as session:
            stubs = {s.name: grpc.aio.insecure_channel(f"127.0.0.1:{s.grpc}") for s in servers}
            for r in range(rounds):
                for name, conc in plan:
                    for s in servers:
                        if s.name == "ceiling" and ("REST" in name or "stream" in name):
                            continue
                        stub = A2AServiceStub(stubs[s.name])
                        calls = scenarios(s, session, stub)
                        if "GetTask" in name:  # create the task it reads
                            await calls["SendMessage JSON-RPC"]()
                        if name.startswith("stream"):
                            res = await stream_100(s, session, stub, name.split()[-1].lower()
                                                   .replace("-", ""), seconds)
                        else:
                            res = await load(calls[name], seconds, conc)
                        table.setdefault((name, conc), {}).setdefault(s.name, []).append(res)
                        print(f"  round {r + 1} {name} c={conc} {s.name}: {res.rate:.0f}/s "
                              f"p99 {res.p99_ms:.1f} ms, errors {res.errors}, "
                              f"loadgen {res.loadgen_cpu:.0%}", file=sys.stderr, flush=True)
            for ch in stubs.values():
                await ch.close()
    finally:
        for s in servers:
            s.stop()
    return render(table, rounds, seconds)


def render(table: dict[tuple[str, int], dict[str, list[Result]]], rounds: int,
           seconds: float) -> str:
    def med(rs: list[Result], key: str) -> float:
        return statistics.median(getattr(r, key) if key in Result.__dataclass_fields__
                                 else r.extra[key] for r in rs)

    lines = [f"Medians of {rounds} rounds x {seconds:g} s, alternating; servers on CPU 0, "
             "load generator on CPU 1.", "",
             "| scenario | conc. | ours /s | SDK /s | ours/SDK | ceiling /s | ours/ceiling | "
             "p99 ours ms | p99 SDK ms | p99 ours/SDK | errors | loadgen CPU |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for (name, conc), by in table.items():
        ours, sdk = med(by["ours"], "rate"), med(by["sdk"], "rate")
        ceil = med(by["ceiling"], "rate") if "ceiling" in by else float("nan")
        p99o, p99s = med(by["ours"], "p99_ms"), med(by["sdk"], "p99_ms")
        errors = sum(r.errors for rs in by.values() for r in rs)
        cpu = max(r.loadgen_cpu for rs in by.values() for r in rs)
        rng = f" ({min(r.rate for r in by['ours']):.0f}-{max(r.rate for r in by['ours']):.0f})"
        lines.append(f"| {name} | {conc} | {ours:.0f}{rng} | {sdk:.0f} | {ours / sdk:.1f}x | "
                     f"{ceil:.0f} | {ours / ceil:.0%} | {p99o:.1f} | {p99s:.1f} | "
                     f"{p99o / p99s:.2f} | {errors} | {cpu:.0%} |")
        if name.startswith("stream"):
            fo, fs = med(by["ours"], "first_event_ms"), med(by["sdk"], "first_event_ms")
            lines.append(f"| ↳ time to first event | | {fo:.1f} ms | {fs:.1f} ms | "
                         f"{fo / fs:.2f} | | | | | | | |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=3.0)
    args = parser.parse_args()
    if not SDK_PYTHON.exists():
        sys.exit("the official SDK's virtualenv is missing: run `make test` once "
                 "(the interop tests create .interop/sdk-venv)")
    print(asyncio.run(run(args.rounds, args.seconds)))


if __name__ == "__main__":
    main()
