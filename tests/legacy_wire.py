"""Raw JSON-RPC calls in the earlier dialects' shapes, for the wire tests."""

from __future__ import annotations

import json
from typing import Any

from tests.conftest import Stack

STATES_03 = {"submitted", "working", "input-required", "completed", "canceled", "failed",
             "rejected", "auth-required", "unknown"}


async def rpc(s: Stack, method: str, params: Any, **headers: str) -> dict[str, Any]:
    async with s.session.post(s.base_url + "/", headers=headers, json={
            "jsonrpc": "2.0", "id": "r", "method": method, "params": params}) as resp:
        assert resp.status == 200 and resp.content_type == "application/json"
        body: dict[str, Any] = await resp.json()
    assert body["jsonrpc"] == "2.0" and body["id"] == "r"
    return body


def message(text: str = "hello", **extra: Any) -> dict[str, Any]:
    return {"kind": "message", "role": "user", "messageId": f"m-{text}-{len(extra)}",
            "parts": [{"kind": "text", "text": text}], **extra}


def assert_task_03(task: dict[str, Any]) -> None:
    assert task["kind"] == "task" and task["status"]["state"] in STATES_03
    for m in task.get("history", []):
        assert m["kind"] == "message" and m["role"] in ("user", "agent")
        assert all(p["kind"] in ("text", "file", "data") for p in m["parts"])
    for a in task.get("artifacts", []):
        assert all(p["kind"] in ("text", "file", "data") for p in a["parts"])
    assert "TASK_STATE" not in json.dumps(task) and "ROLE_" not in json.dumps(task)
