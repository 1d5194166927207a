"""Talk to any A2A 1.0 agent, ours or not: `A2AClient.connect(url)`.

    async with await A2AClient.connect("http://127.0.0.1:8080") as client:
        task = await client.send_text("hello")
        async for event in client.stream_text("stream 5"):
            ...
"""

from a2a_grpc.client.client import A2AClient
from a2a_grpc.client.credentials import ClientCredentialsGrant
from a2a_grpc.client.errors import AgentUnreachableError, BadResponseError, NoUsableInterfaceError
from a2a_grpc.client.options import ClientOptions

__all__ = ["A2AClient", "AgentUnreachableError", "BadResponseError", "ClientCredentialsGrant",
           "ClientOptions", "NoUsableInterfaceError"]
