"""Instructions per operation, counted by callgrind: a figure this noisy machine repeats.

`make bench-instructions` (= `python -m benchmarks.instructions`) runs the
service in process (demo agent, memory store, the Admission and metrics
layers `serve` puts in front, no network) under `valgrind --tool=callgrind`
twice, with a small and a larger number of operations, and reports the
difference divided by the difference in operations: start-up and warm-up
cancel out. Wall-clock A/B runs on a shared 2-core VM move 10-20% from run
to run; these counts move by well under 1%, so a change of a few per cent is
seen (docs/benchmarks.md). Each count takes about a minute.

Scenarios: `send` (SendMessage `hello`, 32 at a time, each answer checked),
`sqlite` (the same sends on the SQLite store, the default, in a fresh file:
both threads are counted, the store's worker and SQLite's own C code
included, not the kernel's work behind its writes) and `event`
(SendStreamingMessage `stream 100`, 4 at a time, every event rendered as a
JSON-RPC SSE payload, per event), and `shared` (a task that 4
SubscribeToTask readers follow, 4 such tasks at a time, per event: 4
renderings of it); `plain-send` and `plain-event` are `send` and `event` on
the memory store's plain task table (stores/memory_plain.py) instead of the
packed one it uses. `--python` counts another
interpreter (a virtualenv with the project installed). `--wire`: whole
server processes, ours and the ceiling, over each binding
(benchmarks/instructions_wire.py).
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SMALL = {"send": 320, "sqlite": 320, "event": 40, "shared": 8, "plain-send": 320,
         "plain-event": 40}
LARGE = {"send": 1600, "sqlite": 1600, "event": 200, "shared": 40, "plain-send": 1600,
         "plain-event": 200}
# operations per unit: a `stream 100` carries 103 events; `shared`: a task's
# WORKING, 100 chunks and COMPLETED, each to its 4 readers (counted per event)
PER = {"send": 1, "sqlite": 1, "event": 103, "shared": 102, "plain-send": 1, "plain-event": 103}
READERS = 4

WORKLOAD = '''
import asyncio, collections, sys, tempfile, uuid
from pathlib import Path
sys.path.insert(0, {root!r})
from a2a_grpc.demos.demo import DemoAgent, demo_card
from a2a_grpc.app.admission import Admission, AdmissionOptions
from a2a_grpc.app.http import tune_collector
from a2a_grpc.bridge import codec
from a2a_grpc.bridge.jsonrpc import reply
from a2a_grpc.bridge.sse import frame as sse_frame
from a2a_grpc.core.call import CallContext
from a2a_grpc.generated import a2a_pb2 as pb
from a2a_grpc.handler.request_handler import RequestHandler
from a2a_grpc.observe.metrics import Metrics
from a2a_grpc.observe.observed import ObservedService

# Under callgrind the program runs some 50 times slower than natively: an agent's
# quantum (how long it may hold the loop, execution/turns.py) is stretched as
# much, or every event would outlast it and yield, which natively few do.
from a2a_grpc.execution import turns
turns.QUANTUM_S *= 50

async def main(scenario, n, folder):
    store = None
    if scenario.startswith("plain-"):  # the memory store's plain task table, not the packed
        from a2a_grpc.stores.memory import MemoryTaskStore
        from a2a_grpc.stores.memory_plain import PlainTasks
        store, scenario = MemoryTaskStore(PlainTasks()), scenario.removeprefix("plain-")
    if scenario == "sqlite":
        from a2a_grpc.stores.sqlite import SqliteTaskStore
        store = SqliteTaskStore(Path(folder) / "tasks.db")
        await store.open()
    metrics = Metrics()
    waiting = collections.defaultdict(asyncio.Event)

    class Waits(DemoAgent):  # `wait`: WORKING, then (once told) `stream 100`'s chunks
        async def execute(self, context, events):
            if context.text != "wait":
                return await super().execute(context, events)
            await events.working()
            await waiting[context.task_id].wait()
            await self._stream(events, 100, 0)

    service = ObservedService(Admission(RequestHandler(Waits(), demo_card(), store=store),
                                        AdmissionOptions(1024), metrics.registry),
                              "jsonrpc", metrics)
    ctx = CallContext.from_headers({{"a2a-version": "1.0"}})

    def request(text):
        return pb.SendMessageRequest(message=pb.Message(
            message_id=str(uuid.uuid4()), role=pb.ROLE_USER, parts=[pb.Part(text=text)]))

    async def send(k):
        for _ in range(k):
            answer = await service.send_message(request("hello"), ctx)
            assert answer.task.artifacts[0].parts[0].text == "echo: hello"

    def sse(events, event):  # as the JSON-RPC edge writes an event (bridge/sse.py)
        return sse_frame(reply(1, result=codec.printed_event(event, events.shared())),
                         event_id=events.seq)

    async def stream(k):
        for _ in range(k):
            events = await service.send_streaming_message(request("stream 100"), ctx)
            count = 0
            async for event in events:
                sse(events, event)
                count += 1
            assert count == 103

    async def read(events):
        count = 0
        async for event in events:
            sse(events, event)
            count += 1
        assert count == 102, count  # WORKING, 100 chunks, COMPLETED

    async def shared(k):  # a task that {readers} streams follow (SubscribeToTask)
        for _ in range(k):
            asked = request("wait")
            asked.configuration.return_immediately = True
            task = (await service.send_message(asked, ctx)).task
            streams = [await service.subscribe_to_task(pb.SubscribeToTaskRequest(id=task.id),
                                                       ctx) for _ in range({readers})]
            for events in streams:
                await events.__anext__()  # the task: each reader is subscribed
            waiting[task.id].set()
            await asyncio.gather(*(read(events) for events in streams))

    work, width = {{"event": (stream, 4), "shared": (shared, 4)}}.get(scenario, (send, 32))
    await asyncio.gather(*(work(2) for _ in range(width)))  # warm-up
    tune_collector()  # as serve does once it is up
    await asyncio.gather(*(work(n // width) for _ in range(width)))
    if store is not None:
        await store.close()

import uvloop
with tempfile.TemporaryDirectory() as folder:
    uvloop.run(main({scenario!r}, {n}, folder))
'''


def count(python: str, scenario: str, n: int) -> int:
    """Instructions callgrind counted for a whole run of `n` units."""
    script = WORKLOAD.format(root=str(ROOT), scenario=scenario, n=n, readers=READERS)
    done = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", python, "-c", script],
        capture_output=True, text=True, check=False)
    found = re.search(r"Collected : (\d+)", done.stderr)
    if done.returncode != 0 or found is None:
        raise SystemExit(f"the {scenario} run failed:\n{done.stderr[-3000:]}")
    return int(found.group(1))


def main() -> None:
    if "--wire" in sys.argv[1:]:  # whole server processes over the wire: instructions_wire.py
        sys.argv.remove("--wire")
        from benchmarks import instructions_wire

        instructions_wire.main()
        return
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    # Checked below, not with `choices`: Python 3.11's argparse checks an empty
    # `*` positional (or its list default) against the choices and refuses it.
    parser.add_argument("scenarios", nargs="*",
                        metavar="{send,sqlite,event,shared,plain-send,plain-event}")
    parser.add_argument("--python", default=sys.executable,
                        help="the interpreter to count (its environment must have the "
                             "project's dependencies)")
    args = parser.parse_args()
    if unknown := set(args.scenarios) - set(PER):
        parser.error(f"unknown scenario {', '.join(sorted(unknown))}: send, sqlite, event "
                     "or shared")
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed: apt-get install valgrind")
    for scenario in args.scenarios or ["send", "sqlite", "event", "shared"]:
        print(f"  counting {scenario}: two runs under callgrind, about a minute each",
              file=sys.stderr, flush=True)
        small, large = count(args.python, scenario, SMALL[scenario]), count(
            args.python, scenario, LARGE[scenario])
        units = (LARGE[scenario] - SMALL[scenario]) * PER[scenario]
        print(f"{scenario}: {(large - small) / units:,.0f} instructions each")


if __name__ == "__main__":
    main()
