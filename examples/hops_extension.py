"""An extension, worked: "hops" records which agents a request went through.

A client that wants the record asks for the extension (`A2A-Extensions`);
each agent on the way that supports it activates it, passes the request on
with the extensions it was asked for, and answers with its name ahead of the
hops its downstream agent reported, in the artifact's metadata
(`{"hops": ["front", "back"]}`). The response names the extension as
activated, so the client knows the record is there. Run two:

    HOP_NAME=back a2a-grpc serve --http-port 8082 --grpc-port 50062 \\
        --agent examples.hops_extension:Hops
    HOP_NAME=front HOP_NEXT=http://127.0.0.1:8082 a2a-grpc serve \\
        --agent examples.hops_extension:Hops
"""

from __future__ import annotations

import os
import uuid

from google.protobuf.struct_pb2 import Struct

from a2a_grpc import AgentExecutor, RequestContext, TaskEvents
from a2a_grpc.client import A2AClient, ClientOptions
from a2a_grpc.types import (
    AgentCapabilities,
    AgentCard,
    AgentExtension,
    AgentSkill,
    Message,
    Part,
    SendMessageRequest,
)

HOPS = "https://a2a-grpc.example/ext/hops/v1"  # an example's URI: yours names your own


class Hops(AgentExecutor):
    def __init__(self) -> None:
        self.name = os.environ.get("HOP_NAME", "hop")
        self.next = os.environ.get("HOP_NEXT")  # the agent to pass requests on to, if any
        self.card = AgentCard(
            name=self.name, description="Answers, and says which agents the answer came through.",
            version="1.0.0", default_input_modes=["text/plain"],
            default_output_modes=["text/plain"],
            capabilities=AgentCapabilities(streaming=True, extensions=[AgentExtension(
                uri=HOPS, description="the artifact's metadata lists the agents it went "
                "through: {\"hops\": [...]}")]),
            skills=[AgentSkill(id="echo", name="Echo", description="echoes",
                               tags=["example"])])

    async def execute(self, context: RequestContext, events: TaskEvents) -> None:
        recording = context.activate_extension(HOPS)  # only when the client asked for it
        answer, hops = context.text, [self.name]
        if self.next:
            answer, after = await self._ask_next(context)
            hops += after
        metadata = None
        if recording:
            metadata = Struct()
            metadata.update({"hops": hops})
        await events.artifact(f"{self.name}: {answer}", metadata=metadata)
        await events.complete()

    async def _ask_next(self, context: RequestContext) -> tuple[str, list[str]]:
        """The downstream agent's answer and the hops it reported, the
        extensions this call was asked for passed on."""
        assert self.next is not None
        client = await A2AClient.connect(self.next, ClientOptions(
            extensions=sorted(context.requested_extensions)))
        try:
            sent = await client.send_message(SendMessageRequest(message=Message(
                message_id=str(uuid.uuid4()), role="ROLE_USER",
                parts=[Part(text=context.text)])))
            artifact = sent.task.artifacts[0]
            hops = []
            if HOPS in client.activated():  # it recorded its hops
                hops = [v.string_value for v in artifact.metadata.fields["hops"].list_value.values]
            return artifact.parts[0].text, hops
        finally:
            await client.close()
