"""Frameworks' own a2a-sdk executors served unchanged by `serve --agent`, from
the installed wheel, each in a virtualenv of its own with the framework from
PyPI and the SDK generation it brings, driven offline by a scripted model
(tests/interop/peers/adk_executor.py, strands_executor.py): Google ADK's
A2aAgentExecutor (what `to_a2a` serves; a2a-sdk 1.x) and Strands'
StrandsA2AExecutor (a2a-sdk 0.3), and Strands' A2AServer as its docs write
it. A conversation of two turns on one context over JSON-RPC and HTTP+JSON,
a stream, and `pip check` clean beside the framework."""

from __future__ import annotations

import json
import shutil
import uuid
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tests.packaging.conftest import venv_of
from tests.packaging.framework_servers import cards_read, sdk03_sees, their_server
from tests.packaging.installed import HEADERS, ROOT, run, serving

PEERS = ROOT / "tests" / "interop" / "peers"
# framework -> (what its venv holds, the executor file, the SDK line it brings, what it says)
CASES = {
    "adk": ("google-adk[a2a]>=2.13", "adk_executor.py", "1.", "adk heard"),
    "strands": ("strands-agents[a2a]>=1.62", "strands_executor.py", "0.3.", "strands heard"),
}


@pytest.fixture(scope="module", params=sorted(CASES))
def framework(request: pytest.FixtureRequest, installed: tuple[Path, Path],
              tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    wheel, _ = installed
    name = request.param
    return name, venv_of(tmp_path_factory, f"sdk-{name}", str(wheel), CASES[name][0])


def text_of(task: dict[str, Any]) -> str:
    return "".join(p.get("text", "") for a in task.get("artifacts", []) for p in a["parts"])


async def jsonrpc_send(http: aiohttp.ClientSession, base: str, text: str,
                       context_id: str) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {
        "messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": text}],
        "contextId": context_id}}}
    async with http.post(base + "/", json=body) as resp:
        answer: dict[str, Any] = await resp.json()
    assert "result" in answer, answer
    task: dict[str, Any] = answer["result"]["task"]
    return task


async def rest_send(http: aiohttp.ClientSession, base: str, text: str,
                    context_id: str) -> dict[str, Any]:
    body = {"message": {"messageId": str(uuid.uuid4()), "role": "ROLE_USER",
                        "parts": [{"text": text}], "contextId": context_id}}
    async with http.post(base + "/message:send", json=body) as resp:
        answer: dict[str, Any] = await resp.json()
    assert "task" in answer, answer
    task: dict[str, Any] = answer["task"]
    return task


async def test_the_frameworks_executor_is_served_unchanged(
        framework: tuple[str, Path], with_sdk03: Path, with_sdk: Path, tmp_path: Path) -> None:
    name, python = framework
    _, script, line, says = CASES[name]
    shutil.copy(PEERS / script, tmp_path / script)
    version = json.loads(await _sdk_version(python))
    assert version.startswith(line), version
    spec = f"{script.removesuffix('.py')}:executor"
    async with serving(python, tmp_path, "--agent", spec,
                       "--store", f"sqlite:///{tmp_path / 'tasks.db'}") as (_, port):
        base = f"http://127.0.0.1:{port}"
        # No card file: the SDK's clients of both generations read the card served.
        read = await cards_read(base, tmp_path, with_sdk03, with_sdk)
        assert read[0] == read[1] and read[0]["skills"], read
        async with aiohttp.ClientSession(headers=HEADERS) as http:
            for send in (jsonrpc_send, rest_send):
                context = str(uuid.uuid4())
                first = await send(http, base, "hello", context)
                second = await send(http, base, "again", context)
                assert first["status"]["state"] == "TASK_STATE_COMPLETED", first
                assert text_of(first).strip() == f"{says} hello (1 turns)"
                assert text_of(second).strip() == f"{says} again (2 turns)"
                assert second["contextId"] == first["contextId"] == context
            body = {"message": {"messageId": str(uuid.uuid4()), "role": "ROLE_USER",
                                "parts": [{"text": "streamed"}]}}
            async with http.post(base + "/message:stream", json=body) as resp:
                events = [json.loads(line[5:]) for line in (await resp.text()).splitlines()
                          if line.startswith("data:")]
    assert next(iter(events[0])) == "task"
    assert events[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    streamed = "".join(p.get("text", "") for e in events if "artifactUpdate" in e
                       for p in e["artifactUpdate"]["artifact"]["parts"])
    assert streamed.strip() == f"{says} streamed (1 turns)"
    # Beside the framework and the SDK it brings, nothing conflicts.
    assert "No broken requirements" in run(python, "-m", "pip", "check", cwd=tmp_path)


async def test_strands_server_as_its_docs_write_it(framework: tuple[str, Path],
                                                   tmp_path: Path) -> None:
    """`A2AServer(agent=...)`, what Strands' docs have users write: its executor
    served with the card it builds (the agent's name and description)."""
    name, python = framework
    if name != "strands":
        pytest.skip("a Strands server: the ADK case serves its executor above")
    shutil.copy(PEERS / "strands_executor.py", tmp_path / "strands_executor.py")
    async with serving(python, tmp_path, "--agent", "strands_executor:a2a_server",
                       "--store", "memory") as (_, port):
        base = f"http://127.0.0.1:{port}"
        async with aiohttp.ClientSession(headers=HEADERS) as http:
            async with http.get(base + "/.well-known/agent-card.json") as resp:
                card = await resp.json()
            task = await rest_send(http, base, "hi", str(uuid.uuid4()))
    assert (card["name"], card["description"]) == ("scripted", "Echoes, scripted")
    assert text_of(task).strip() == "strands heard hi (1 turns)"


async def test_the_frameworks_own_server_answers_as_ours(framework: tuple[str, Path],
                                                        tmp_path: Path) -> None:
    """The same agent on the framework's own server (ADK's `to_a2a` under
    uvicorn; Strands' `A2AServer.serve()`) and on ours, each asked by a client
    of the SDK generation the framework brings: the same answers."""
    name, python = framework
    _, script, _, says = CASES[name]
    shutil.copy(PEERS / script, tmp_path / script)
    module = script.removesuffix(".py")
    agent = f"{module}:executor" if name == "adk" else f"{module}:a2a_server"
    async with their_server(python, script, tmp_path) as base:
        theirs = await (_answers(base) if name == "adk" else sdk03_sees(python, tmp_path, base))
    async with serving(python, tmp_path, "--agent", agent, "--store", "memory") as (_, port):
        base = f"http://127.0.0.1:{port}"
        ours = await (_answers(base) if name == "adk" else sdk03_sees(python, tmp_path, base))
    if name == "adk":
        assert theirs["text"].strip() == f"{says} hello (1 turns)", theirs
        for key in ("state", "text", "stream", "streamed"):  # the cards are each server's own
            assert ours[key] == theirs[key], (key, ours, theirs)
        return
    assert theirs["second"][-1]["text"].strip() == f"{says} again (2 turns)", theirs
    assert (ours["card"], ours["first"], ours["second"]) == (
        theirs["card"], theirs["first"], theirs["second"])
    # A 0.3 stream starts with the Task on ours (docs/official-sdk-agents.md): the
    # streams agree from their second event on, and end alike.
    assert ours["stream"][1:] == theirs["stream"][-len(ours["stream"]) + 1:], (ours, theirs)


async def _sdk_version(python: Path) -> str:
    import asyncio

    proc = await asyncio.create_subprocess_exec(
        str(python), "-c", "import importlib.metadata as m, json; "
        "print(json.dumps(m.version('a2a-sdk')))", stdout=asyncio.subprocess.PIPE)
    out, _ = await proc.communicate()
    return out.decode()


@pytest.fixture(scope="module")
def with_ag2(installed: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    # AG2's JSON-RPC app needs the SDK's HTTP server (its own docs say to install it).
    return venv_of(tmp_path_factory, "sdk-ag2", str(installed[0]), "ag2[a2a]>=1.2",
                   "a2a-sdk[http-server]", "uvicorn>=0.30")


async def _answers(base: str) -> dict[str, Any]:
    """What a client sees of the agent at `base`: its card's name, a send's
    state and text, a stream's kinds of events and text."""
    async with aiohttp.ClientSession(headers=HEADERS) as http:
        async with http.get(base + "/.well-known/agent-card.json") as resp:
            card = await resp.json()
        task = await jsonrpc_send(http, base, "hello", str(uuid.uuid4()))
        body = {"jsonrpc": "2.0", "id": 2, "method": "SendStreamingMessage", "params": {
            "message": {"messageId": str(uuid.uuid4()), "role": "ROLE_USER",
                        "parts": [{"text": "streamed"}]}}}
        async with http.post(base + "/", json=body,
                             headers={"Accept": "text/event-stream"}) as resp:
            events = [json.loads(line[5:])["result"] for line in (await resp.text()).splitlines()
                      if line.startswith("data:")]
    kinds = [next(iter(e)) if "statusUpdate" not in e
             else e["statusUpdate"]["status"]["state"] for e in events]
    streamed = "".join(p.get("text", "") for e in events if "artifactUpdate" in e
                       for p in e["artifactUpdate"]["artifact"]["parts"])
    # An answer as an artifact, the status message, or (Agent Framework's) an agent
    # message the next status moved into the history.
    said = [task["status"].get("message", {}), *reversed(task.get("history", []))]
    status_text = next(("".join(p.get("text", "") for p in m["parts"]) for m in said
                        if m.get("role") == "ROLE_AGENT"), "")
    return {"name": card["name"], "skills": len(card.get("skills", [])),
            "state": task["status"]["state"], "text": text_of(task) or status_text,
            "stream": kinds, "streamed": streamed}


async def test_ag2_server_is_served_as_ag2_serves_it(with_ag2: Path, with_sdk03: Path,
                                                     with_sdk: Path, tmp_path: Path) -> None:
    """`--agent ag2_agent:server` naming AG2's own `A2AServer(agent)`: what
    the same agent answers on AG2's JSON-RPC app (build_jsonrpc under uvicorn),
    it answers on ours, card included."""
    shutil.copy(PEERS / "ag2_agent.py", tmp_path / "ag2_agent.py")
    async with their_server(with_ag2, "ag2_agent.py", tmp_path) as base:
        theirs = await _answers(base)
    async with serving(with_ag2, tmp_path, "--agent", "ag2_agent:server",
                       "--store", "memory") as (_, ours_port):
        ours = await _answers(f"http://127.0.0.1:{ours_port}")
        read = await cards_read(f"http://127.0.0.1:{ours_port}", tmp_path, with_sdk03, with_sdk)
    assert read == [{"name": ours["name"], "skills": read[0]["skills"]}] * 2 and read[0]["skills"]
    assert theirs["text"] == "ag2 heard hello" and theirs["state"] == "TASK_STATE_COMPLETED"
    assert ours == theirs, (ours, theirs)
    assert "No broken requirements" in run(with_ag2, "-m", "pip", "check", cwd=tmp_path)


@pytest.fixture(scope="module")
def with_maf(installed: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    return venv_of(tmp_path_factory, "sdk-maf", str(installed[0]),
                   "agent-framework-a2a>=1.0.0b261022", "a2a-sdk[http-server]", "uvicorn>=0.30")


async def test_agent_framework_executor_is_served_as_the_sdk_serves_it(
        with_maf: Path, with_sdk03: Path, with_sdk: Path, tmp_path: Path) -> None:
    """Microsoft Agent Framework's A2AExecutor (the Task, then submit(), then
    the work): what the SDK's own server answers with it, ours answers, the
    `submitted` status after the Task included."""
    from tests.packaging.test_sdk_agents import sdk_serving

    for name in ("maf_executor.py", "sdk_server.py", "peer_executor.py"):
        shutil.copy(PEERS / name, tmp_path / name)
    async with sdk_serving(with_maf, tmp_path, "sdk_server.py", "maf_executor:executor",
                           "0") as port:
        theirs = await _answers(f"http://127.0.0.1:{port}")
    async with serving(with_maf, tmp_path, "--agent", "maf_executor:executor",
                       "--store", "memory") as (_, ours_port):
        ours = await _answers(f"http://127.0.0.1:{ours_port}")
        read = await cards_read(f"http://127.0.0.1:{ours_port}", tmp_path, with_sdk03, with_sdk)
    assert read[0] == read[1] == {"name": ours["name"], "skills": read[0]["skills"]}, read
    assert theirs["text"] == "maf heard hello" and theirs["state"] == "TASK_STATE_COMPLETED"
    assert theirs["stream"][:3] == ["task", "TASK_STATE_SUBMITTED", "TASK_STATE_WORKING"]
    for key in ("state", "text", "stream", "streamed"):  # the cards are each server's own
        assert ours[key] == theirs[key], (key, ours, theirs)
    assert ours["skills"] == 1  # made for the executor: a 0.3 client reads it too
    assert "No broken requirements" in run(with_maf, "-m", "pip", "check", cwd=tmp_path)
