"""The integration test kit's agent (itk/agent.py, what `make itk` serves to
a2aproject/a2a-itk) among its own kind: three `serve` processes, a traversal
instruction built as the kit builds it (a hop per edge: a trace token, then a
call of the next agent with the rest), sent to the first over JSON-RPC as the
kit's runner does, on each binding, blocking and streaming, with webhooks,
and with a hang-up and a resubscribe. The kit's own agents (the official
SDKs, 1.0 and 0.3) are driven by `make itk`, from a local checkout."""

from __future__ import annotations

import base64
import uuid
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest

from itk.agent import FINISHED, instruction_of, texts_of
from itk.instruction_pb2 import Instruction, SeriesOfSteps
from tests.bindings import parse_sse
from tests.processes import Server, reap, start_server
from tests.webhook import Webhook, start_webhook

JSONRPC_PATH = "/jsonrpc/"  # where the kit's runner posts to its first agent
END = "traversal-completed"


@pytest.fixture
async def agents() -> AsyncIterator[list[Server]]:
    made: list[Server] = []
    try:
        for _ in range(3):
            made.append(await start_server(
                "serve", "--agent", "itk.agent:TraversalAgent", "--store", "memory",
                "--jsonrpc-path", JSONRPC_PATH, "--allow-push-to", "127.0.0.1",
                "--allow-http-push"))
        yield made
    finally:
        for server in made:
            reap(server.proc)


def traversal(circuit: list[Server], transport: str, *, streaming: bool = False,
              push: str = "", resubscribe: bool = False) -> tuple[Instruction, list[str]]:
    """The nested instruction for hops along `circuit`, and the trace tokens
    (the answer's lines: each hop's, first hop first, then the end's)."""
    inner = Instruction()
    inner.return_response.response = f"{END}:{transport}"
    inner.return_response.hold_task = resubscribe
    tokens = []
    for i in range(len(circuit) - 2, -1, -1):
        token = f"[{i} -> {i + 1} ({transport})]"
        tokens.append(token)
        hop = Instruction()
        hop.steps.response_generator = SeriesOfSteps.RESPONSE_GENERATOR_CONCAT
        trace = hop.steps.instructions.add()
        trace.return_response.response = token
        trace.return_response.hold_task = resubscribe
        call = hop.steps.instructions.add().call_agent
        call.agent_card_uri = circuit[i + 1].url
        call.transport = transport
        call.streaming = streaming
        call.instruction.CopyFrom(inner)
        if push:
            call.push_notification.url = push
        elif resubscribe:
            call.resubscribe.SetInParent()
        else:
            call.send_message.SetInParent()
        inner = hop
    return inner, [*reversed(tokens), f"{END}:{transport}"]  # in the answer's order


def payload(inst: Instruction, streaming: bool = False) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": str(uuid.uuid4()),
            "method": "SendStreamingMessage" if streaming else "SendMessage",
            "params": {"message": {"role": "ROLE_USER", "messageId": str(uuid.uuid4()),
                                   "parts": [{"raw": base64.b64encode(
                                       inst.SerializeToString()).decode(),
                                       "mediaType": "application/x-protobuf",
                                       "filename": "instruction.bin"}]}}}


async def run(first: Server, inst: Instruction) -> str:
    async with aiohttp.ClientSession() as http, http.post(
            first.url + JSONRPC_PATH, json=payload(inst)) as resp:
        body = await resp.json()
    task = body["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED", task
    return "\n".join(p["text"] for p in task["status"]["message"]["parts"])


@pytest.mark.parametrize("transport", ["jsonrpc", "grpc", "http_json"])
@pytest.mark.parametrize("streaming", [False, True])
async def test_a_circuit_over_each_binding(agents: list[Server], transport: str,
                                           streaming: bool) -> None:
    """0 -> 1 -> 2 -> 0: every hop's token comes back, in order."""
    inst, tokens = traversal([*agents, agents[0]], transport, streaming=streaming)
    answer = await run(agents[0], inst)
    assert answer.splitlines() == tokens


async def test_the_first_hop_streams_to_the_runner(agents: list[Server]) -> None:
    inst, tokens = traversal(agents[:2], "grpc", streaming=True)
    async with aiohttp.ClientSession() as http, http.post(
            agents[0].url + JSONRPC_PATH, json=payload(inst, streaming=True)) as resp:
        events, _ = parse_sse(await resp.text())
    states = [e.data["result"].get("statusUpdate", {}).get("status", {}).get("state")
              for e in events[1:]]
    assert states == ["TASK_STATE_WORKING", "TASK_STATE_COMPLETED"]
    final = events[-1].data["result"]["statusUpdate"]["status"]["message"]["parts"][0]["text"]
    assert final.splitlines() == tokens


async def test_every_hop_pushes_to_the_webhook(agents: list[Server]) -> None:
    hook: Webhook = await start_webhook()
    try:
        base = hook.url("/").removesuffix("/")
        inst, tokens = traversal(agents, "http_json", push=base)
        assert (await run(agents[0], inst)).splitlines() == tokens
        # each called agent's task, after the webhook is set with it: WORKING, and
        # COMPLETED with its answer
        hits = await hook.wait_for("/notifications", 4)
        assert {h.headers.get("X-A2A-Notification-Token") for h in hits} == {"itk-token"}
        said = sorted(t for h in hits for t in texts_of(h.event))
        assert said == sorted([f"{END}:http_json", f"{tokens[1]}\n{END}:http_json"])
    finally:
        await hook.server.close()


async def test_a_hang_up_and_a_resubscribe(agents: list[Server]) -> None:
    """The called agent holds its task WORKING with the answers and
    task-finished in a status; the caller hangs up after the first event,
    subscribes again and finds them."""
    inst, tokens = traversal(agents[:2], "jsonrpc", streaming=True, resubscribe=True)
    answer = await run(agents[0], inst)
    # the first agent holds too, so its own answer ends with task-finished
    assert [line for line in answer.splitlines() if line] == [*tokens, FINISHED]


def test_instructions_are_found_in_raw_or_base64_parts() -> None:
    from a2a_grpc.generated import a2a_pb2 as pb

    inst, _ = traversal([], "grpc")
    raw = inst.SerializeToString()
    for part in (pb.Part(raw=raw, media_type="application/x-protobuf"),
                 pb.Part(raw=raw, filename="instruction.bin"),
                 pb.Part(text=base64.b64encode(raw).decode())):
        found = instruction_of(pb.Message(parts=[pb.Part(text="hello"), part]))
        assert found == inst
    assert instruction_of(pb.Message(parts=[pb.Part(text="not an instruction")])) is None
