"""Run by the official a2a-sdk's own virtualenv (never imported by our tests).

Usage: python sdk_grpc_client.py CARD_JSON_FILE
Drives our server through the SDK's ClientFactory + gRPC transport and
prints one JSON object with what it saw; the pytest side checks it.
"""

import asyncio
import json
import sys

import grpc
from a2a.client import ClientConfig, ClientFactory
from a2a.types import a2a_pb2 as pb
from google.protobuf import json_format
from sdk_common import error_of, kinds, msg, state


async def main(card_path):
    with open(card_path) as f:  # noqa: ASYNC230 (a tiny file, before any I/O starts)
        card = json_format.Parse(f.read(), pb.AgentCard())
    seen = {"card_interfaces": [i.protocol_binding for i in card.supported_interfaces]}

    def channel(url):  # the card's address as it is: host:port
        return grpc.aio.insecure_channel(url)

    unary = ClientFactory(ClientConfig(streaming=False, supported_protocol_bindings=["GRPC"],
                                       grpc_channel_factory=channel)).create(card)
    streaming = ClientFactory(ClientConfig(streaming=True, supported_protocol_bindings=["GRPC"],
                                           grpc_channel_factory=channel)).create(card)

    # send (unary)
    [ev] = [e async for e in unary.send_message(pb.SendMessageRequest(message=msg("hello sdk")))]
    task = ev.task
    seen["send"] = {"state": state(task), "artifact": task.artifacts[0].parts[0].text,
                    "history0": task.history[0].parts[0].text}
    # direct reply
    [ev] = [e async for e in unary.send_message(pb.SendMessageRequest(message=msg("reply hey")))]
    seen["reply"] = {"kind": ev.WhichOneof("payload"), "text": ev.message.parts[0].text}
    # get
    got = await unary.get_task(pb.GetTaskRequest(id=task.id, history_length=0))
    seen["get"] = {"same_id": got.id == task.id, "history": len(got.history),
                   "state": state(got)}
    # stream
    request = pb.SendMessageRequest(message=msg("stream 3"))
    events = [e async for e in streaming.send_message(request)]
    seen["stream"] = {"kinds": kinds(events),
                      "chunks": [e.artifact_update.artifact.parts[0].text
                                 for e in events if e.HasField("artifact_update")]}
    # multi-turn
    [ev] = [e async for e in unary.send_message(pb.SendMessageRequest(message=msg("ask")))]
    asked = ev.task
    [ev] = [e async for e in unary.send_message(pb.SendMessageRequest(message=msg("42", asked.id)))]
    seen["multi_turn"] = {"first": state(asked), "second": state(ev.task),
                          "same_context": ev.task.context_id == asked.context_id}
    # list
    listed = await unary.list_tasks(pb.ListTasksRequest(page_size=2))
    seen["list"] = {"count": len(listed.tasks), "total": listed.total_size,
                    "has_next": bool(listed.next_page_token)}
    # cancel a slow task, while subscribed to it
    slow = pb.SendMessageRequest(message=msg("slow 60"),
                                 configuration=pb.SendMessageConfiguration(return_immediately=True))
    [ev] = [e async for e in unary.send_message(slow)]
    sub = streaming.subscribe(pb.SubscribeToTaskRequest(id=ev.task.id))
    first = await sub.__anext__()
    canceled = await unary.cancel_task(pb.CancelTaskRequest(id=ev.task.id))
    rest = [e async for e in sub]
    seen["cancel"] = {"state": state(canceled), "subscribe_first": kinds([first])[0],
                      "subscribe_rest": kinds(rest)[-1:]}
    # errors, as the SDK's typed exceptions
    seen["errors"] = {
        "get_unknown": await error_of(unary.get_task(pb.GetTaskRequest(id="no-such-task"))),
        "cancel_done": await error_of(unary.cancel_task(pb.CancelTaskRequest(id=task.id))),
        "follow_up_done": await error_of(
            unary.send_message(pb.SendMessageRequest(message=msg("x", task.id))).__anext__()),
        "push_off": await error_of(unary.create_task_push_notification_config(
            pb.TaskPushNotificationConfig(task_id=task.id, url="https://example.com/h"))),
        "invalid": await error_of(unary.get_task(pb.GetTaskRequest(id=""))),
    }
    extended = await unary.get_extended_agent_card(pb.GetExtendedAgentCardRequest())
    seen["extended_card_skills"] = [s.id for s in extended.skills]
    await unary.close()
    await streaming.close()
    print(json.dumps(seen))


asyncio.run(main(sys.argv[1]))
