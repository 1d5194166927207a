"""The official a2a-sdk client (PyPI), in its own virtualenv, against our server."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
from google.protobuf import json_format

from a2a_grpc.cards.card import Interface, card_for, public_card
from a2a_grpc.demos.demo import DemoAgent
from a2a_grpc.generated import a2a_pb2 as pb
from a2a_grpc.handler.request_handler import RequestHandler
from tests.carried import on_carrier

PEERS = Path(__file__).parent / "peers"
pytestmark = pytest.mark.interop


def members_card() -> pb.AgentCard:
    """The demo agent's card with an extended card, push notifications off (to
    see the SDK's typed refusal)."""
    card = card_for(DemoAgent())
    card.capabilities.extended_agent_card = True
    card.capabilities.push_notifications = False
    return card


def members_handler() -> RequestHandler:
    card = members_card()
    extended = pb.AgentCard()
    extended.CopyFrom(card)
    extended.skills.add(id="members", name="Members only", description="x", tags=["x"])
    return RequestHandler(DemoAgent(), card, extended_card=extended)


@pytest.mark.parametrize("carrier", ["grpc.aio", "pyvoy"])
async def test_sdk_grpc_client_drives_every_operation(sdk_python: Path, tmp_path: Path,
                                                      carrier: str) -> None:
    async with on_carrier(carrier, "tests.interop.test_official_sdk:members_handler") as port:
        card = public_card(members_card(),  # as `serve` does
                           [Interface("GRPC", f"127.0.0.1:{port}")])
        card_file = tmp_path / "card.json"
        card_file.write_text(json_format.MessageToJson(card))
        proc = await asyncio.create_subprocess_exec(
            str(sdk_python), str(PEERS / "sdk_grpc_client.py"), str(card_file),
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        out, err = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode == 0, err.decode()[-3000:]
    seen = json.loads(out)
    print(json.dumps(seen, indent=1), file=sys.stderr)
    assert seen["card_interfaces"] == ["GRPC"]
    assert seen["send"] == {"state": "TASK_STATE_COMPLETED", "artifact": "echo: hello sdk",
                            "history0": "hello sdk"}
    assert seen["reply"] == {"kind": "message", "text": "hey"}
    assert seen["get"] == {"same_id": True, "history": 0, "state": "TASK_STATE_COMPLETED"}
    assert seen["stream"]["kinds"] == ["task:TASK_STATE_SUBMITTED", "TASK_STATE_WORKING",
                                       "artifact_update", "artifact_update", "artifact_update",
                                       "TASK_STATE_COMPLETED"]
    assert seen["stream"]["chunks"] == ["chunk 1/3", "chunk 2/3", "chunk 3/3"]
    assert seen["multi_turn"] == {"first": "TASK_STATE_INPUT_REQUIRED",
                                  "second": "TASK_STATE_COMPLETED", "same_context": True}
    assert seen["list"] == {"count": 2, "total": 3, "has_next": True}  # reply made no task
    assert seen["cancel"] == {"state": "TASK_STATE_CANCELED",
                              "subscribe_first": "task:TASK_STATE_WORKING",
                              "subscribe_rest": ["TASK_STATE_CANCELED"]}
    assert seen["extended_card_skills"][-1] == "members"
    assert seen["errors"] == {
        "get_unknown": "TaskNotFoundError",
        "cancel_done": "TaskNotCancelableError",
        "follow_up_done": "UnsupportedOperationError",
        "push_off": "PushNotificationNotSupportedError",
        "invalid": "InvalidParamsError",
    }
