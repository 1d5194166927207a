"""Store benchmarks (issue: durable stores).

1. ListTasks page latency at 1,000 and at 100,000 stored tasks, per store,
   through the store API (first page, with its total count, and a page deep
   in the cursor chain), and the ratio between the two sizes.
2. Sustained SendMessage throughput through the in-process RequestHandler on
   SQLite versus memory (32 concurrent senders), rounds alternating A B A B,
   median and min-max.

Run: `make bench` (or `python -m benchmarks.stores --tasks 100000`).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

from a2a_grpc.cards.card import card_for
from a2a_grpc.core import listing
from a2a_grpc.core.call import CallContext
from a2a_grpc.core.listing import TaskQuery
from a2a_grpc.demos.demo import DemoAgent
from a2a_grpc.generated import a2a_pb2 as pb
from a2a_grpc.handler.request_handler import RequestHandler
from a2a_grpc.stores import MemoryTaskStore, Scope, TaskStore
from a2a_grpc.stores.postgres import PostgresTaskStore
from a2a_grpc.stores.sqlite import SqliteTaskStore

SCOPE = Scope("", "")


def progress(text: str) -> None:
    print(f"  {text}", file=sys.stderr, flush=True)


async def fill(store: TaskStore, start: int, stop: int, parallel: int) -> None:
    step = max((stop - start) // 10, 1)

    async def one(i: int) -> None:
        t = pb.Task(id=f"task-{i:07d}", context_id=f"ctx-{i % 100}",
                    status=pb.TaskStatus(state=pb.TASK_STATE_COMPLETED))
        t.status.timestamp.FromNanoseconds(1_700_000_000_000_000_000 + i * 1000)
        t.artifacts.add(artifact_id="a", parts=[pb.Part(text=f"result {i}")])
        await store.append(SCOPE, t, 1, pb.StreamResponse(task=t))

    for base in range(start, stop, parallel):
        await asyncio.gather(*(one(i) for i in range(base, min(base + parallel, stop))))
        if (base - start) % step < parallel:
            progress(f"{base - start + parallel}/{stop - start} tasks written")


async def page_latency(store: TaskStore, rounds: int = 200) -> tuple[float, float]:
    """Median ms of (first page incl. total, the page 10 pages deep), after a warm-up."""
    q = TaskQuery("", "", "", 0, None, 50, None, None, False)  # type: ignore[arg-type]
    cursor = None
    for _ in range(10):
        page, _ = await store.list_tasks(q if cursor is None else _at(q, cursor))
        cursor = listing.sort_key(page[-1])
    deep = _at(q, cursor)
    first_ms, deep_ms = [], []
    for _ in range(rounds // 4):  # warm-up: caches, prepared statements
        await store.list_tasks(q)
        await store.list_tasks(deep)
    for _ in range(rounds):
        t0 = time.perf_counter()
        await store.list_tasks(q)
        t1 = time.perf_counter()
        await store.list_tasks(deep)
        t2 = time.perf_counter()
        first_ms.append((t1 - t0) * 1000)
        deep_ms.append((t2 - t1) * 1000)
    return statistics.median(first_ms), statistics.median(deep_ms)


def _at(q: TaskQuery, cursor: listing.SortKey | None) -> TaskQuery:
    import dataclasses

    return dataclasses.replace(q, cursor=cursor)


async def bench_pages(kind: str, store: TaskStore, small: int, large: int) -> str:
    parallel = 16 if kind == "postgres" else 1
    progress(f"{kind}: writing {small} tasks")
    await fill(store, 0, small, parallel)
    at_small = await page_latency(store)
    progress(f"{kind}: writing {large - small} more tasks")
    await fill(store, small, large, parallel)
    at_large = await page_latency(store)
    return (f"| {kind} | {at_small[0]:.3f} / {at_small[1]:.3f} | {at_large[0]:.3f} / "
            f"{at_large[1]:.3f} | {at_large[0] / at_small[0]:.2f} / "
            f"{at_large[1] / at_small[1]:.2f} |")


async def throughput(handler: RequestHandler, seconds: float, concurrency: int = 32) -> float:
    done = 0
    deadline = time.perf_counter() + seconds
    ctx = CallContext()

    async def sender() -> None:
        nonlocal done
        while time.perf_counter() < deadline:
            req = pb.SendMessageRequest(message=pb.Message(
                message_id=str(uuid.uuid4()), role=pb.ROLE_USER, parts=[pb.Part(text="hi")]))
            resp = await handler.send_message(req, ctx)
            assert resp.task.status.state == pb.TASK_STATE_COMPLETED, resp
            done += 1

    start = time.perf_counter()
    await asyncio.gather(*(sender() for _ in range(concurrency)))
    return done / (time.perf_counter() - start)


async def bench_sends(tmp: Path, rounds: int, seconds: float) -> list[str]:
    agent = DemoAgent()
    sqlite = SqliteTaskStore(tmp / "sends.db")
    await sqlite.open()
    handlers = {"memory": RequestHandler(agent, card_for(agent), store=MemoryTaskStore()),
                "sqlite": RequestHandler(agent, card_for(agent), store=sqlite)}
    results: dict[str, list[float]] = {k: [] for k in handlers}
    for r in range(rounds):
        for kind, handler in handlers.items():  # A B A B
            results[kind].append(await throughput(handler, seconds))
            progress(f"sends round {r + 1}/{rounds} {kind}: {results[kind][-1]:.0f}/s")
    for handler in handlers.values():
        await handler.close()
    await sqlite.close()
    med = {k: statistics.median(v) for k, v in results.items()}
    lines = [f"| {k} | {med[k]:.0f} | {min(v):.0f}-{max(v):.0f} |" for k, v in results.items()]
    lines.append(f"| sqlite / memory | {med['sqlite'] / med['memory']:.2f} | |")
    return lines


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tasks", type=int, default=100_000, help="large store size")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--postgres", default="postgresql://postgres@127.0.0.1:5432/test")
    parser.add_argument("--stores", default="memory,sqlite,postgres",
                        help="which stores to page through (comma-separated)")
    parser.add_argument("--no-sends", action="store_true", help="skip the throughput part")
    args = parser.parse_args()
    small = min(1_000, args.tasks)
    with tempfile.TemporaryDirectory() as tmp:
        rows = []
        stores: list[tuple[str, TaskStore]] = [("memory", MemoryTaskStore()),
                                               ("sqlite", SqliteTaskStore(Path(tmp) / "p.db"))]
        schema = f"bench_{uuid.uuid4().hex[:8]}"
        try:
            import asyncpg

            conn = await asyncpg.connect(args.postgres, timeout=5)
            await conn.execute(f"CREATE SCHEMA {schema}")
            await conn.close()
            stores.append(("postgres", PostgresTaskStore(f"{args.postgres}?search_path={schema}")))
        except Exception as exc:  # reported, then the PostgreSQL rows are skipped
            progress(f"postgres skipped: {exc}")
            schema = ""
        wanted = set(args.stores.split(","))
        for kind, store in stores:
            if kind not in wanted:
                continue
            await store.open()
            rows.append(await bench_pages(kind, store, small, args.tasks))
            await store.close()
        if schema:
            conn = await asyncpg.connect(args.postgres, timeout=5)
            await conn.execute(f"DROP SCHEMA {schema} CASCADE")
            await conn.close()
        sends = [] if args.no_sends else await bench_sends(Path(tmp), args.rounds, args.seconds)
    print(f"\nListTasks page latency, ms (median of 200): first page / page 11; "
          f"{small:,} vs {args.tasks:,} tasks")
    print("| store | at small | at large | large / small |\n|---|---|---|---|")
    print("\n".join(rows))
    print(f"\nSendMessage through the handler, 32 concurrent, tasks/s "
          f"({args.rounds} rounds x {args.seconds:g} s, alternating)")
    print("| store | median | min-max |\n|---|---|---|")
    print("\n".join(sends))


if __name__ == "__main__":
    asyncio.run(main())
