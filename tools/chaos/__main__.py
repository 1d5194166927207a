"""`make chaos`: three replicas under load while faults come together, then
every acknowledged operation checked against the store (tools/chaos/).

    python -m tools.chaos [--minutes 10] [--rate 8] [--fault-every 15] [--lease 3]
                          [--seed 1] [--doc]

The faults, in turn, one every --fault-every seconds: SIGKILL a replica and
start it again; SIGSTOP one for twice its lease, then SIGCONT; kill Redis and
start it again; terminate PostgreSQL's connections; cut one replica off
PostgreSQL, Redis or both (packets black-holed, sockets held open) for twice
its lease, then heal; kill the replica whose push delivery the webhook is
holding unanswered, then start it again. Then the load stops, the
leases run out, and the checker reads every task. Exit status 1 when an
acknowledged operation was lost, a task reached two final states, a stream
saw an event twice or skipped one, a task was left running, one messageId
made two tasks, or a notification came again with another body. `--doc`
rewrites docs/reliability.md's figures.
Needs the PostgreSQL of A2A_TEST_POSTGRES and Debian's redis-server.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import time
from dataclasses import asdict

from tools.chaos.check import Verdict, check, read_tasks
from tools.chaos.cluster import ROOT, Cluster, Replica
from tools.chaos.hook import Hook
from tools.chaos.load import Load

DOC = ROOT / "docs" / "reliability.md"
LOGS = ROOT / ".chaos"


KINDS = ["kill", "pause", "partition-postgres", "redis", "push-kill", "kill", "postgres",
         "partition-redis", "partition-both", "push-kill"]


async def faults(cluster: Cluster, hook: Hook, every: float, until: float, seed: int,
                 windows: list[tuple[float, float]], done: dict[str, int]) -> None:
    rng = random.Random(seed)
    kinds = KINDS
    i = 0
    while time.monotonic() + every < until:
        await asyncio.sleep(every)
        kind, replica = kinds[i % len(kinds)], rng.choice(cluster.replicas)
        i += 1
        start = time.monotonic()
        named = kind in ("kill", "pause") or kind.startswith("partition")
        print(f"chaos: {kind} {replica.name if named else ''}".rstrip(), flush=True)
        if kind.startswith("partition"):
            await cluster.partition(replica, kind.split("-", 1)[1], 2 * cluster.lease)
        elif kind == "push-kill":
            victim = await aimed(cluster, hook, every)
            if victim is None:
                kind = "push-kill missed"  # no delivery came, or its sender was not told
            else:
                print(f"chaos: killed {victim.name} with a push delivery in flight", flush=True)
        elif kind == "kill":
            await cluster.kill_and_restart(replica, down=rng.uniform(0.5, 2.0))
        elif kind == "pause":
            await cluster.pause(replica, 2 * cluster.lease)
        elif kind == "redis":
            await cluster.restart_redis(down=rng.uniform(0.5, 2.0))
        else:
            await cluster.cut_postgres()
        windows.append((start, time.monotonic() + cluster.lease))
        done[kind] = done.get(kind, 0) + 1


async def aimed(cluster: Cluster, hook: Hook, within: float) -> Replica | None:
    """Kill the replica whose push delivery the webhook holds unanswered; start
    it again. The delivery is lost with it: another replica sends it again
    once the claim runs out (a duplicate, same Idempotency-Key)."""
    held = hook.hold_next()
    try:
        pid = await asyncio.wait_for(held, within)
    except TimeoutError:
        hook.release()
        return None
    victim = next((r for r in cluster.replicas if r.proc is not None and r.proc.pid == pid),
                  None)
    if victim is None or victim.proc is None:
        hook.release()
        return None
    victim.proc.kill()
    victim.proc.wait()
    hook.release()
    await asyncio.sleep(0.5)
    cluster.launch(victim)
    await cluster.ready(victim)
    return victim


async def run(args: argparse.Namespace) -> Verdict:
    cluster = Cluster(args.lease, LOGS)
    hook = Hook()
    await hook.start()
    await cluster.start()
    windows: list[tuple[float, float]] = []
    done: dict[str, int] = {}
    try:
        load = Load([r.url for r in cluster.replicas], args.rate, args.seed, hook.url)
        seconds = args.minutes * 60
        began = time.monotonic()
        print(f"chaos: {args.minutes:g} min at {args.rate:g} ops/s, a fault every "
              f"{args.fault_every:g} s (logs in {LOGS})", flush=True)
        await asyncio.gather(load.run(seconds), faults(
            cluster, hook, args.fault_every, began + seconds, args.seed, windows, done))
        print(f"chaos: load done ({len(load.ops)} operations); waiting for every task to "
              "settle", flush=True)
        tasks = await read_tasks([r.url for r in cluster.replicas], settle=6 * args.lease + 30)
        await pushes_done(load, tasks, hook)
        verdict = check(load.ops, tasks, windows, hook.got, hook.finals, hook.changed)
    finally:
        await cluster.stop(keep=args.keep)
        await hook.stop()
    report = {"minutes": args.minutes, "rate": args.rate, "faults": done,
              "tasks": len(tasks), **asdict(verdict), "ok": verdict.ok}
    (LOGS / "report.json").write_text(json.dumps(report, indent=1))
    print(json.dumps({k: v for k, v in report.items()
                      if not isinstance(v, list) or v}, indent=1))
    if args.doc:
        write_doc(report)
    return verdict


async def pushes_done(load: Load, tasks: dict[str, dict[str, object]], hook: Hook) -> None:
    """Wait (a minute at most) for the notification of every final state that
    a task sent with a webhook reached: deliveries a killed replica had claimed
    are retried by another once their claim runs out."""
    wanted = {op.task_id for op in load.ops if op.kind == "push" and op.acked}
    for _ in range(120):
        if all(t in hook.finals for t in wanted if t in tasks):
            return
        await asyncio.sleep(0.5)


def write_doc(report: dict[str, object]) -> None:
    text = DOC.read_text()
    start, end = "<!-- chaos:begin -->", "<!-- chaos:end -->"
    figures = json.dumps(report, indent=1)
    block = f"{start}\n```json\n{figures}\n```\n{end}"
    head, _, rest = text.partition(start)
    _, _, tail = rest.partition(end)
    DOC.write_text(head + block + tail)
    print(f"wrote {DOC.relative_to(ROOT)}")


def main() -> None:
    parser = argparse.ArgumentParser(prog="make chaos")
    parser.add_argument("--minutes", type=float, default=10)
    parser.add_argument("--rate", type=float, default=8, help="operations started per second")
    parser.add_argument("--fault-every", type=float, default=15)
    parser.add_argument("--lease", type=float, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--doc", action="store_true", help="rewrite docs/reliability.md")
    parser.add_argument("--keep", action="store_true", help="keep the PostgreSQL schema")
    args = parser.parse_args()
    verdict = asyncio.run(run(args))
    sys.exit(0 if verdict.ok else 1)


if __name__ == "__main__":
    main()
