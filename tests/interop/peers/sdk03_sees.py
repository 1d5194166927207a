"""Run by a virtualenv holding a framework and the a2a-sdk 0.3 it brings
(never imported by our tests).

Usage: python sdk03_sees.py BASE_URL
What the SDK's 0.3 client sees of an agent wherever it is served (the
framework's own server or ours): the card it resolves (no card file is
given to either), two sends on one conversation and a stream (each event's
kind and, at its end, the state and text), as one JSON object without ids:
the test compares the two servers' objects.
"""

import asyncio
import json
import sys
import uuid

import httpx
from a2a.client import ClientConfig, ClientFactory
from a2a.types import Message, Part, Role, TextPart


def message(text, context_id=None):
    return Message(message_id=str(uuid.uuid4()), role=Role.user, context_id=context_id,
                   parts=[Part(root=TextPart(text=text))])


def text_of(parts):
    return "".join(p.root.text for p in parts if hasattr(p.root, "text"))


def seen(event):
    if isinstance(event, Message):
        return {"kind": "message", "role": event.role.value, "task_id": bool(event.task_id),
                "text": text_of(event.parts)}
    task, update = event
    said = task.status.message.parts if task.status.message else []
    return {"kind": type(update).__name__ if update is not None else "task",
            "state": task.status.state.value,
            "text": "".join(text_of(a.parts) for a in task.artifacts or []) or text_of(said)}


async def main(base):
    async with httpx.AsyncClient(timeout=30) as http:
        def config(streaming):
            return ClientConfig(streaming=streaming, supported_transports=["JSONRPC"],
                                httpx_client=http)

        unary = await ClientFactory.connect(base, config(False))
        streaming = await ClientFactory.connect(base, config(True))
        card = await unary.get_card()
        context = str(uuid.uuid4())
        first = [seen(e) async for e in unary.send_message(message("hello", context))]
        second = [seen(e) async for e in unary.send_message(message("again", context))]
        stream = [seen(e) async for e in streaming.send_message(message("streamed"))]
    print(json.dumps({
        "card": {"name": card.name, "description": card.description,
                 "skills": [(s.id, s.tags) for s in card.skills],
                 "streaming": card.capabilities.streaming},
        "first": first, "second": second, "stream": stream}))


asyncio.run(main(sys.argv[1]))
