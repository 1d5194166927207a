"""Executors written for the official SDK, served unchanged by `serve --agent`
from the installed wheel: the same executors on the SDK's own server and on
ours, driven by the SDK's own client over JSON-RPC, HTTP+JSON and gRPC, give
the same answers (final states, texts, event sequences, 0.3's `final` flags,
follow-ups, conversations on one context, cancel), except where we follow
A2A 1.0 and the SDK does not, each checked below as docs/official-sdk-agents.md
says; 1.x's give ours the same answers on the pyvoy carrier. Both
generations, each in a virtualenv of its own, run from a folder that is not
the repository."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from tests.packaging.installed import ROOT, serving
from tests.processes import LISTENING

PEERS = ROOT / "tests" / "interop" / "peers"
BINDINGS = ("JSONRPC", "HTTP+JSON", "GRPC")


def peers(into: Path, *names: str) -> Path:
    for name in names:
        shutil.copy(PEERS / name, into / name)
    return into


@asynccontextmanager
async def sdk_serving(python: Path, cwd: Path, script: str, executor: str,
                      *args: str) -> AsyncIterator[int]:
    """The SDK's own server serving `executor`, as its HTTP port."""
    env = {**{k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")},
           "A2A_SDK_EXECUTOR": executor}
    proc = await asyncio.create_subprocess_exec(
        str(python), script, *args, cwd=cwd, env=env, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT)
    try:
        assert proc.stdout is not None
        printed: list[str] = []
        while not (found := LISTENING.search(line := (await asyncio.wait_for(
                proc.stdout.readline(), 60)).decode())):
            printed.append(line)
            assert line, "the SDK's server exited:\n" + "".join(printed)
        yield int(found.group(2))
    finally:
        proc.kill()
        await proc.wait()


async def drive(python: Path, cwd: Path, client: str, port: int, binding: str) -> Any:
    proc = await asyncio.create_subprocess_exec(
        str(python), client, f"http://127.0.0.1:{port}", binding, cwd=cwd,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode == 0, f"{client} {binding}:\n{err.decode()[-3000:]}"
    return json.loads(out)


async def both(python: Path, cwd: Path, agents: str, client: str,
               sdk_server: tuple[str, ...]) -> dict[str, tuple[Any, Any]]:
    """{binding: (what the SDK's server gave, what ours gave)}."""
    seen: dict[str, tuple[Any, Any]] = {}
    async with (sdk_serving(python, cwd, *sdk_server) as theirs,
                serving(python, cwd, "--agent", f"{agents}:Samples",
                        "--store", f"sqlite:///{cwd / 'tasks.db'}") as (_, ours)):
        for binding in BINDINGS:
            seen[binding] = (await drive(python, cwd, client, theirs, binding),
                             await drive(python, cwd, client, ours, binding))
    return seen


def differences(theirs: dict[str, Any], ours: dict[str, Any]) -> set[str]:
    return {k for k in theirs.keys() | ours.keys() if theirs.get(k) != ours.get(k)}


async def test_sdk_1x_executors_served_as_the_sdk_serves_them(
        with_sdk: Path, tmp_path: Path) -> None:
    cwd = peers(tmp_path, "sdk_agents.py", "sdk_agent_client.py", "sdk_common.py",
                "sdk_server.py", "peer_executor.py")
    seen = await both(with_sdk, cwd, "sdk_agents", "sdk_agent_client.py",
                      ("sdk_server.py", "sdk_agents:Samples", "0", "0"))
    for binding, (theirs, ours) in seen.items():
        # Where we follow A2A 1.0 (docs/official-sdk-agents.md): an agent's status
        # message is in the history at once; an exception fails the task (the
        # caller gets the FAILED task, where the SDK's server answers an error); a
        # cancel() that raises is TaskNotCancelableError and the run goes on
        # (the SDK's server stops the run, fails the task, answers an error).
        assert differences(theirs, ours) <= {"hello", "ask", "boom", "raw", "stubborn",
                                             "reject"}, binding
        assert ours["hello"] == {**theirs["hello"],
                                 "history": ["ROLE_USER", "ROLE_AGENT", "ROLE_AGENT"]}
        assert ours["hello"]["artifacts"] == [["Hello, World! (hello there)"]]
        assert ours["hello_stream"] == ["task:TASK_STATE_SUBMITTED", "TASK_STATE_WORKING",
                                        "artifact_update", "TASK_STATE_COMPLETED"]
        assert ours["ask"]["first"]["state"] == "TASK_STATE_INPUT_REQUIRED"
        assert ours["ask"]["then"]["artifacts"] == [["Hello Ada (history 2)"]]
        assert theirs["ask"]["then"]["artifacts"] == [["Hello Ada (history 1)"]]
        assert ours["chat"] == ["message", ["turn 1: chat one"], ["turn 2: chat two"], True]
        assert ours["count_stream"]["chunks"] == [[False, False, ["1"]], [True, False, ["2"]],
                                                  [True, True, ["3"]]]
        assert ours["whoami"]["artifacts"] == [[
            "user=- auth=False tenant=- extensions=- metadata=trace input=whoami"]]
        assert theirs["boom"] != ours["boom"] == {"state": "TASK_STATE_FAILED",
                                                   "artifacts": 0}
        assert ours["raw"] == {**theirs["raw"], "history": ["ROLE_USER", "ROLE_AGENT"]}
        assert ours["raw"]["artifacts"] == [["raw events"]]
        assert ours["raw_stream"] == ["task:TASK_STATE_SUBMITTED", "artifact_update",
                                      "TASK_STATE_COMPLETED"]
        assert ours["refuse"] == {"error": "InvalidParamsError"}
        assert ours["early"] == {"error": "InvalidAgentResponseError"}
        assert ours["cancel"]["state"] == ours["cancel"]["stored"] == "TASK_STATE_CANCELED"
        assert ours["cancel"]["stream"][-1] == "TASK_STATE_CANCELED"
        assert ours["cancel"]["cancel_again"] == "TaskNotCancelableError"
        # Agent Framework's order: the Task, then submit(): both streamed.
        assert ours["submitted_stream"] == theirs["submitted_stream"] == [
            "task:TASK_STATE_SUBMITTED", "TASK_STATE_SUBMITTED", "TASK_STATE_WORKING",
            "artifact_update", "TASK_STATE_COMPLETED"]
        assert ours["stubborn"] == {"cancel": "TaskNotCancelableError", "stream": [
            "task:TASK_STATE_SUBMITTED", "TASK_STATE_WORKING", "artifact_update",
            "TASK_STATE_COMPLETED"], "stored": "TASK_STATE_COMPLETED"}
        assert theirs["stubborn"]["cancel"] is not None  # an error there too
        assert ours["reject"] == {**theirs["reject"], "history": ["ROLE_USER", "ROLE_AGENT"]}
        assert ours["reject"]["state"] == "TASK_STATE_REJECTED"
        assert ours["reject"]["status"] == ["I can only convert currencies."]
    # The same executors with pyvoy carrying every binding: what grpc.aio and
    # aiohttp gave, binding for binding.
    async with serving(with_sdk, cwd, "--agent", "sdk_agents:Samples", "--grpc-carrier",
                       "pyvoy", "--store", f"sqlite:///{cwd / 'pyvoy.db'}") as (_, port):
        for binding in BINDINGS:
            carried = await drive(with_sdk, cwd, "sdk_agent_client.py", port, binding)
            assert carried == seen[binding][1], (binding, differences(carried, seen[binding][1]))


async def test_sdk_03_executors_served_as_the_sdk_serves_them(
        with_sdk03: Path, tmp_path: Path) -> None:
    cwd = peers(tmp_path, "sdk03_agents.py", "sdk03_agent_client.py", "sdk03_common.py",
                "sdk03_server.py", "peer_executor.py")
    seen = await both(with_sdk03, cwd, "sdk03_agents", "sdk03_agent_client.py",
                      ("sdk03_server.py", "sdk03_agents:Samples"))
    for binding, (theirs, ours) in seen.items():
        # Where we follow A2A 1.0: a stream starts with the Task (0.3's server
        # streams the executor's first status); the status message is in the
        # history at once; a canceled stream ends with its final event (0.3's
        # server leaves it open).
        assert differences(theirs, ours) <= {"submit_stream", "raw_stream", "ask",
                                             "cancel"}, binding
        assert ours["hello"] == {"state": "completed", "status": [],
                                 "artifacts": [["Hello, World! (hello there)"]]}
        assert ours["hello_stream"] == [
            "task", "status-update:working:final=False",
            "artifact-update:Hello, World! (hello stream)", "status-update:completed:final=True"]
        assert theirs["submit_stream"][0] == "status-update:submitted:final=False"
        assert ours["submit_stream"] == ["task", *theirs["submit_stream"][1:]]
        assert ours["submit"]["artifacts"] == [["submitted first"]]
        # Hand-built events: artifacts before any Task, a final status, one more
        # event after it (dropped, as 0.3's closed queue drops it).
        assert ours["raw"] == theirs["raw"] == {"state": "completed", "status": ["raw done"],
                                                "artifacts": [["raw"], ["events"]]}
        assert ours["raw_stream"] == ["task", *theirs["raw_stream"]] == [
            "task", "artifact-update:raw", "artifact-update:events",
            "status-update:completed:final=True"]
        assert ours["ask"]["first"] == {"state": "input-required",
                                        "status": ["What is your name?"], "artifacts": []}
        assert ours["ask"]["then"]["artifacts"] == [["Hello Ada (history 4)"]]
        assert theirs["ask"]["then"]["artifacts"] == [["Hello Ada (history 3)"]]
        assert ours["chat"] == ["message", ["turn 1: chat one"], ["turn 2: chat two"]]
        assert ours["count_stream"] == ["task", "artifact-update:1", "artifact-update:2",
                                        "artifact-update:3", "status-update:completed:final=True"]
        assert "extensions=https://example.com/ext/echo-context/v1" in (
            ours["whoami"]["artifacts"][0][0])
        assert ours["done"] == {"state": "completed", "status": [],
                                "artifacts": [["all done"]]}
        assert ours["refuse"] == theirs["refuse"] == {"error": "A2AClientJSONRPCError"} or (
            binding != "JSONRPC")
        assert ours["cancel"] == {"state": "canceled", "stored": "canceled", "stream": [
            "task", "status-update:working:final=False", "status-update:canceled:final=True"]}
        assert theirs["cancel"]["stream"][:2] == ours["cancel"]["stream"][:2]


APP_03 = '''
from a2a.server.apps import A2AStarletteApplication
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.tasks import InMemoryTaskStore
from a2a.types import AgentCapabilities, AgentCard
from sdk03_agents import Samples

card = AgentCard(name="Built as an SDK app", description="its card", version="3",
                 url="http://localhost:9999/", default_input_modes=["text"],
                 default_output_modes=["text"], capabilities=AgentCapabilities(), skills=[])
app = A2AStarletteApplication(agent_card=card, http_handler=DefaultRequestHandler(
    agent_executor=Samples(), task_store=InMemoryTaskStore()))
'''


async def test_an_sdk_app_as_users_build_it_is_served_with_its_card(
        with_sdk03: Path, tmp_path: Path) -> None:
    """`--agent module:app` naming the SDK's own A2AStarletteApplication: its
    executor is served, with the card it publishes."""
    import aiohttp

    cwd = peers(tmp_path, "sdk03_agents.py")
    (cwd / "sdk03_app.py").write_text(APP_03)
    async with serving(with_sdk03, cwd, "--agent", "sdk03_app:app",
                       "--store", "memory") as (_, port):
        base = f"http://127.0.0.1:{port}"
        async with aiohttp.ClientSession(headers={"A2A-Version": "1.0"}) as http:
            async with http.get(base + "/.well-known/agent-card.json") as got:
                card = await got.json()
            body = {"message": {"messageId": "m1", "role": "ROLE_USER",
                                "parts": [{"text": "hello app"}]}}
            async with http.post(base + "/message:send", json=body) as got:
                task = (await got.json())["task"]
    assert (card["name"], card["version"]) == ("Built as an SDK app", "3")
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["artifacts"][0]["parts"][0]["text"] == "Hello, World! (hello app)"


async def test_sdk_executors_under_workers_answer_as_one_process(
        with_sdk: Path, tmp_path: Path) -> None:
    """`serve --workers 2`: each call may land on either worker (a follow-up, a
    cancel, a conversation's second turn on another than the first), and the
    SDK's executors answer as they do in one process."""
    cwd = peers(tmp_path, "sdk_agents.py", "sdk_agent_client.py", "sdk_common.py",
                "peer_executor.py")
    seen: dict[str, list[Any]] = {}
    for flags in ((), ("--workers", "2")):
        store = cwd / f"tasks{len(flags)}.db"
        async with serving(with_sdk, cwd, "--agent", "sdk_agents:Samples", "--store",
                           f"sqlite:///{store}", *flags) as (_, port):
            for binding in ("JSONRPC", "GRPC"):
                seen.setdefault(binding, []).append(
                    await drive(with_sdk, cwd, "sdk_agent_client.py", port, binding))
    for binding, (alone, workers) in seen.items():
        assert differences(alone, workers) == set(), (binding, alone, workers)


BARE_03 = '''
from a2a.server.agent_execution import AgentExecutor
from a2a.server.tasks import TaskUpdater
from a2a.utils import new_agent_text_message, new_task


class EchoExecutor(AgentExecutor):
    """Echoes what it is told."""

    async def execute(self, context, event_queue):
        task = new_task(context.message)
        await event_queue.enqueue_event(task)
        await TaskUpdater(event_queue, task.id, task.context_id).complete(
            new_agent_text_message("echo: " + context.get_user_input()))

    async def cancel(self, context, event_queue):
        raise Exception("cancel not supported")
'''
SHIM_03 = '''
from a2a.types import AgentCapabilities, AgentCard, AgentSkill
from bare03 import EchoExecutor  # the executor lives elsewhere; its card is made here

agent_card = AgentCard(name="From the shim", description="the shim's card", version="7",
                       url="http://localhost:9999/", default_input_modes=["text"],
                       default_output_modes=["text"], capabilities=AgentCapabilities(),
                       skills=[AgentSkill(id="echo", name="Echo", description="echoes",
                                          tags=[])])
'''
READ_CARD_03 = '''
import asyncio, json, sys
import httpx
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types import Message, Part, Role, TextPart


async def main(base):
    async with httpx.AsyncClient() as http:
        card = await A2ACardResolver(http, base).get_agent_card()  # refuses a card it cannot read
        client = ClientFactory(ClientConfig(httpx_client=http, streaming=False)).create(card)
        message = Message(role=Role.user, message_id="m1", parts=[Part(root=TextPart(text="hi"))])
        answered = [e async for e in client.send_message(message)]
        task = answered[-1][0]
        print(json.dumps({"name": card.name, "skills": [s.name for s in card.skills],
                          "tags": [s.tags for s in card.skills], "state": task.status.state.value,
                          "said": task.status.message.parts[0].root.text}))


asyncio.run(main(sys.argv[1]))
'''
READ_CARD_1X = '''
import asyncio, json, sys
import httpx
from a2a.client import A2ACardResolver


async def main(base):
    async with httpx.AsyncClient() as http:
        card = await A2ACardResolver(http, base).get_agent_card()
    print(json.dumps({"name": card.name, "skills": [s.name for s in card.skills]}))


asyncio.run(main(sys.argv[1]))
'''


async def test_without_a_card_file_every_client_reads_the_card(
        with_sdk03: Path, with_sdk: Path, tmp_path: Path) -> None:
    """No --card and no card in the executor's module: the card `serve` makes
    has a skill named after the executor, and the keys 0.3 requires; the SDK
    0.3 client reads it and calls the agent, the 1.x client reads it too. A
    card made beside the executor in a shim module (`--agent shim:Executor`)
    is the one served, empty tags and all."""
    (tmp_path / "bare03.py").write_text(BARE_03)
    (tmp_path / "shim03.py").write_text(SHIM_03)
    (tmp_path / "read03.py").write_text(READ_CARD_03)
    (tmp_path / "read1x.py").write_text(READ_CARD_1X)
    async with serving(with_sdk03, tmp_path, "--agent", "bare03:EchoExecutor",
                       "--store", "memory") as (_, port):
        made = await drive_script(with_sdk03, tmp_path, "read03.py", port)
        newer = await drive_script(with_sdk, tmp_path, "read1x.py", port)
    assert made == {"name": "EchoExecutor", "skills": ["EchoExecutor"],
                    "tags": [["echo_executor"]], "state": "completed", "said": "echo: hi"}
    assert newer == {"name": "EchoExecutor", "skills": ["EchoExecutor"]}
    async with serving(with_sdk03, tmp_path, "--agent", "shim03:EchoExecutor",
                       "--store", "memory") as (_, port):
        shim = await drive_script(with_sdk03, tmp_path, "read03.py", port)
    assert shim == {"name": "From the shim", "skills": ["Echo"], "tags": [[]],
                    "state": "completed", "said": "echo: hi"}


async def drive_script(python: Path, cwd: Path, script: str, port: int) -> Any:
    proc = await asyncio.create_subprocess_exec(
        str(python), script, f"http://127.0.0.1:{port}", cwd=cwd,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode == 0, f"{script}:\n{err.decode()[-3000:]}"
    return json.loads(out)
