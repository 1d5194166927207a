"""examples/frameworks/orchestrator.py end to end: three `serve` processes,
the orchestrator (a LangGraph graph, served by a2a-grpc) calling a research
agent over gRPC and a writer agent over JSON-RPC with a2a-grpc's client."""

from __future__ import annotations

import uuid
from typing import Any

import aiohttp
import pytest

from tests.processes import reap, start_server


async def test_the_orchestrator_calls_two_agents_over_two_bindings(
        monkeypatch: pytest.MonkeyPatch) -> None:
    research = await start_server("serve", "--store", "memory")  # the demo agent: echoes
    writer = await start_server("serve", "--store", "memory", "--agent",
                                "examples.word_count:WordCount")
    try:
        monkeypatch.setenv("RESEARCH_AGENT", research.url)
        monkeypatch.setenv("WRITER_AGENT", writer.url)
        orchestrator = await start_server("serve", "--store", "memory", "--agent",
                                          "examples.frameworks.orchestrator:graph")
        try:
            task = await _send(orchestrator.url, "tides of Lisbon")
            card = await _card(orchestrator.url)
        finally:
            reap(orchestrator.proc)
    finally:
        reap(research.proc)
        reap(writer.proc)
    assert task["status"]["state"] == "TASK_STATE_COMPLETED", task
    answers = [p["text"] for a in task["artifacts"] for p in a["parts"]]
    assert answers == [
        "research: TASK_STATE_COMPLETED over GRPC: echo: tides of Lisbon",
        # the writer counted the research note's words, over JSON-RPC
        "writer: TASK_STATE_COMPLETED over JSONRPC: 8 words",
    ]
    assert card["name"] == "orchestrator"


async def _send(base: str, text: str) -> dict[str, Any]:
    body = {"message": {"messageId": str(uuid.uuid4()), "role": "ROLE_USER",
                        "parts": [{"text": text}]}}
    async with aiohttp.ClientSession() as http, http.post(
            base + "/message:send", json=body, headers={"A2A-Version": "1.0"}) as resp:
        task: dict[str, Any] = (await resp.json())["task"]
    return task


async def _card(base: str) -> dict[str, Any]:
    async with aiohttp.ClientSession() as http, http.get(
            base + "/.well-known/agent-card.json") as resp:
        card: dict[str, Any] = await resp.json()
    return card
