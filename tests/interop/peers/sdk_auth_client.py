"""Run by the official a2a-sdk's own virtualenv (never imported by our tests).

Usage: python sdk_auth_client.py BASE_URL BINDING ALICE_KEY BOB_KEY
Resolves our card, whose securitySchemes ask for an API key, and lets the
SDK's own AuthInterceptor send the key the way the card says. Prints one JSON
object with what it saw: calls with the key work, calls without it fail with
the SDK's error, and Bob cannot see Alice's task.
"""

import asyncio
import json
import sys

import grpc
from a2a.client import ClientConfig, ClientFactory
from a2a.client.auth import AuthInterceptor
from a2a.client.auth.credentials import CredentialService
from a2a.types import a2a_pb2 as pb
from sdk_common import msg, state


class Key(CredentialService):
    def __init__(self, key):
        self.key = key

    async def get_credentials(self, security_scheme_name, context):
        return self.key if security_scheme_name == "apiKey" else None


async def failure(coro):
    try:
        await coro
    except grpc.aio.AioRpcError as exc:
        return f"{type(exc).__name__}:{exc.code().name}"
    except Exception as exc:
        return f"{type(exc).__name__}:{exc}"[:200]
    return None


async def main(base, binding, alice_key, bob_key):
    config = ClientConfig(streaming=False, supported_protocol_bindings=[binding],
                          grpc_channel_factory=grpc.aio.insecure_channel)
    factory = ClientFactory(config)
    alice = await factory.create_from_url(base, interceptors=[AuthInterceptor(Key(alice_key))])
    bob = await factory.create_from_url(base, interceptors=[AuthInterceptor(Key(bob_key))])
    nobody = await factory.create_from_url(base)
    seen = {}
    [ev] = [e async for e in alice.send_message(pb.SendMessageRequest(message=msg("hello")))]
    seen["send"] = state(ev.task)
    seen["own"] = state(await alice.get_task(pb.GetTaskRequest(id=ev.task.id)))
    seen["listed"] = len((await alice.list_tasks(pb.ListTasksRequest())).tasks)
    seen["other"] = await failure(bob.get_task(pb.GetTaskRequest(id=ev.task.id)))
    seen["nobody"] = await failure(
        nobody.send_message(pb.SendMessageRequest(message=msg("hi"))).__anext__())
    print(json.dumps(seen))


asyncio.run(main(*sys.argv[1:5]))
