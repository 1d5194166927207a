"""Rounds of measurement: every row on every server, alternating, the first
round a warm-up; every answer checked (drive.py)."""

from __future__ import annotations

import json
import sys

from . import drive, report
from .drive import MakeCall, Result
from .servers import Server, start_all

STREAM_EVENTS = 103  # the task, working, 100 chunks, completed


def progress(text: str) -> None:
    print(f"  {text}", file=sys.stderr, flush=True)


async def make_call(row: report.Row, http: drive.Http, rpc: drive.Grpc, task_id: str,
                    firsts: list[float]) -> MakeCall:
    b = row.binding
    if row.scenario == "SendMessage":
        return {"JSON-RPC": http.jsonrpc_send, "REST": http.rest_send, "gRPC": rpc.send}[b]
    if row.scenario == "GetTask":
        get = {"JSON-RPC": http.jsonrpc_get, "REST": http.rest_get, "gRPC": rpc.get}[b]
        return lambda: get(task_id)
    if row.scenario == "ListTasks":
        return {"JSON-RPC": http.jsonrpc_list, "REST": http.rest_list, "gRPC": rpc.list_tasks}[b]
    if b == "gRPC":
        return lambda: rpc.stream("stream 100", firsts, drive.chunks_pb)
    binding = "jsonrpc" if b == "JSON-RPC" else "rest"
    return lambda: http.stream(binding, "stream 100", firsts, drive.chunks_json)


async def measure(row: report.Row, server: Server, rpc: drive.Grpc, task_id: str,
                  seconds: float) -> Result:
    firsts: list[float] = []
    http = drive.Http(server.http)
    result = await drive.load(await make_call(row, http, rpc, task_id, firsts), seconds,
                              row.concurrency)
    if row.scenario.startswith("stream"):
        result.rate *= STREAM_EVENTS
        firsts.sort()
        result.extra["first_event_ms"] = (firsts[len(firsts) // 2] * 1000 if firsts
                                          else float("nan"))
    return result


async def first_task(server: Server) -> str:
    """Send one message; the id of the task it made (what GetTask rows read)."""
    http = drive.Http(server.http)
    conn = await http.connect()
    _, body = await conn.request(http.rpc(
        "SendMessage", f'{{"message":{drive.message_json("hello")}}}'))
    conn.close()
    return str(json.loads(body)["result"]["task"]["id"])


async def rounds(servers: list[Server], rows: list[report.Row], n: int,
                 seconds: float) -> report.Table:
    table: report.Table = {}
    rpcs = {s.label: drive.Grpc(s.grpc) for s in servers}
    tasks = {s.label: await first_task(s) for s in servers}
    try:
        progress("warming up every server on every row (not recorded)")
        for row in rows:
            for s in servers:
                await measure(row, s, rpcs[s.label], tasks[s.label], min(seconds, 0.5))
        for r in range(n):
            for row in rows:
                for s in servers:
                    res = await measure(row, s, rpcs[s.label], tasks[s.label], seconds)
                    table.setdefault(row, {}).setdefault(s.label, []).append(res)
                    progress(f"round {r + 1}/{n} {row.title} {s.label}: {res.rate:.0f}/s, "
                             f"p99 {res.p99_ms:.1f} ms, errors {res.errors}, "
                             f"loadgen CPU {res.loadgen_cpu:.0%}")
    finally:
        for rpc in rpcs.values():
            await rpc.close()
    return table


async def side_by_side(servers: list[Server], rows: list[report.Row], n: int,
                       seconds: float) -> report.Table:
    """Start `servers`, measure `rows` on each (`rounds`), stop them all."""
    start_all(servers)
    try:
        return await rounds(servers, rows, n, seconds)
    finally:
        for s in servers:
            s.stop()
