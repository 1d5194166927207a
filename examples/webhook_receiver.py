"""A complete webhook receiver for a2a-grpc's signed push notifications.

    python examples/webhook_receiver.py AGENT_URL HOOK_URL TOKEN
    e.g. https://agent.example.com https://me.example.com/a2a-hook s3cret

Register https://me.example.com/a2a-hook (token s3cret) as the task's push
config; every notification is verified (token, JWT signature via the agent's
JWKS, audience, age, body hash, replay) before `on_event` sees it.
"""

from __future__ import annotations

import sys

from aiohttp import web
from yarl import URL

from a2a_grpc.push.receiver import PushReceiver
from a2a_grpc.types import StreamResponse


async def on_event(event: StreamResponse) -> None:
    kind = event.WhichOneof("payload")
    print(f"verified {kind}: {event}")


def make_app(agent_url: str, hook_url: str, token: str) -> web.Application:
    receiver = PushReceiver(
        jwks_url=f"{agent_url.rstrip('/')}/.well-known/jwks.json",  # the card names it too
        issuer=agent_url.rstrip("/"), audience=hook_url, token=token)
    app = web.Application()
    app.router.add_post(URL(hook_url).path or "/", receiver.aiohttp_handler(on_event))
    return app


if __name__ == "__main__":
    agent, hook, secret = sys.argv[1:4]
    web.run_app(make_app(agent, hook, secret), port=URL(hook).port or 8000)
