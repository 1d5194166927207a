"""Routes a user adds to the bridge's app after create_app still answer; the
app's last route takes only what nothing else does (bridge.rest.answer_unmatched)."""

from __future__ import annotations

from aiohttp import ClientSession, web
from aiohttp.test_utils import TestServer

from a2a_grpc.bridge import create_app
from a2a_grpc.cards.card import card_for
from a2a_grpc.demos.demo import DemoAgent
from a2a_grpc.handler.request_handler import RequestHandler
from a2a_grpc.stores.memory import MemoryTaskStore


async def test_routes_added_later_on_paths_of_their_own_answer() -> None:
    agent = DemoAgent()
    handler = RequestHandler(agent, card_for(agent), store=MemoryTaskStore())
    app = create_app(handler, card_for(agent))

    async def hook(_: web.Request) -> web.Response:
        return web.Response(text="hooked")

    app.router.add_post("/hooks/in", hook)
    app.router.add_get("/hooks/{name}", hook)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    try:
        async with ClientSession() as session:
            for verb, path in (("POST", "/hooks/in"), ("GET", "/hooks/x")):
                async with session.request(verb, server.make_url(path)) as resp:
                    assert (resp.status, await resp.text()) == (200, "hooked")
            async with session.put(server.make_url("/hooks/in")) as resp:
                body = await resp.json()
                assert resp.status == 405
                assert body["error"]["message"] == (
                    "PUT is not allowed on /hooks/in; use GET, HEAD, POST")  # both routes match
            async with session.get(server.make_url("/hooks/x/y")) as resp:
                assert resp.status == 404
                assert (await resp.json())["error"]["details"][0]["reason"] == "METHOD_NOT_FOUND"
    finally:
        await server.close()
        await handler.close()
