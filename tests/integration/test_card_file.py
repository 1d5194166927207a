"""`serve --card FILE|MODULE:ATTR`: the card a user already has (A2A 1.0's
JSON, or 0.3's as the official SDK's samples write it) is served with its
name, skills, capabilities and security as given, the interfaces ours."""

from __future__ import annotations

import json
from pathlib import Path

import aiohttp
import pytest

from tests.processes import reap, spawn, start_server

CARD_03 = {
    "name": "Hello World Agent", "description": "Just a hello world agent",
    "version": "0.0.1", "url": "http://localhost:9999/", "protocolVersion": "0.3.0",
    "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
    "capabilities": {"streaming": True},
    "securitySchemes": {"key": {"type": "apiKey", "in": "header", "name": "X-API-Key"}},
    "security": [{"key": []}],
    "skills": [{"id": "hello_world", "name": "Returns hello world",
                "description": "just returns hello world", "tags": ["hello world"]}]}


async def card_of(url: str) -> dict[str, object]:
    async with aiohttp.ClientSession() as http, \
            http.get(f"{url}/.well-known/agent-card.json") as got:
        card: dict[str, object] = await got.json()
        return card


async def test_a_03_card_file_is_served_with_its_security_and_our_interfaces(
        tmp_path: Path) -> None:
    path = tmp_path / "card.json"
    path.write_text(json.dumps(CARD_03))
    keys = tmp_path / "keys.txt"
    keys.write_text("alice:key-1\n")
    server = await start_server("serve", "--card", str(path), "--store", "memory",
                                "--api-keys", str(keys))
    try:
        card = await card_of(server.url)
        assert card["name"] == "Hello World Agent"
        assert card["version"] == "0.0.1"
        assert [s["id"] for s in card["skills"]] == ["hello_world"]  # type: ignore[attr-defined]
        assert card["securitySchemes"] == {"key": {"apiKeySecurityScheme": {
            "location": "header", "name": "X-API-Key"}}}
        assert card["securityRequirements"] == [{"schemes": {"key": {}}}]
        urls = [i["url"] for i in card["supportedInterfaces"]]  # type: ignore[attr-defined]
        assert f"{server.url}/" in urls and "http://localhost:9999/" not in urls
        # The card's scheme is the one enforced: no key, no answer.
        async with aiohttp.ClientSession() as http:
            body = {"message": {"messageId": "m1", "role": "ROLE_USER",
                                "parts": [{"text": "hi"}]}}
            async with http.post(f"{server.url}/message:send", json=body) as refused:
                assert refused.status == 401
            async with http.post(f"{server.url}/message:send", json=body,
                                 headers={"X-API-Key": "key-1"}) as sent:
                assert sent.status == 200
    finally:
        reap(server.proc)


async def test_a_card_from_a_module(tmp_path: Path) -> None:
    (tmp_path / "cards.py").write_text(
        "from a2a_grpc.types import AgentCard, AgentSkill\n"
        "card = AgentCard(name='From code', description='d', version='2',\n"
        "                 default_input_modes=['text/plain'],\n"
        "                 default_output_modes=['text/plain'],\n"
        "                 skills=[AgentSkill(id='s', name='S', description='d', tags=['t'])])\n")
    server = await start_server("serve", "--card", "cards:card", "--store", "memory",
                                cwd=tmp_path)
    try:
        card = await card_of(server.url)
        assert (card["name"], card["version"]) == ("From code", "2")
    finally:
        reap(server.proc)


@pytest.mark.parametrize(("content", "said"), [
    ("{not json", "cannot read the agent card"),
    ('{"skills": []}', "is not an agent card"),
])
def test_a_bad_card_is_refused_before_serving(tmp_path: Path, content: str, said: str) -> None:
    path = tmp_path / "card.json"
    path.write_text(content)
    proc = spawn("serve", "--card", str(path), "--store", "memory", "--http-port", "0",
                 "--grpc-port", "0")
    out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 2, out
    assert said in out and "Traceback" not in out

