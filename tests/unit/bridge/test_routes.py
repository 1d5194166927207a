"""The route table's matching (bridge/routes.py), as both faces use it."""

from __future__ import annotations

from multidict import CIMultiDict

from a2a_grpc.bridge.face import Answer, Incoming, Response
from a2a_grpc.bridge.routes import Router


def handler(name: str):  # type: ignore[no-untyped-def]
    async def answer(_: Incoming) -> Response:
        return Answer(200, name.encode())

    return answer


def table() -> Router:
    router = Router()
    router.add("POST", "/", handler("jsonrpc"))
    router.add("POST", "/v1/message:send", handler("v03"))
    router.add("GET", "/v1/tasks/{id:[^/:]+}", handler("v03-get"))
    router.add("POST", "/{tenant:[^/:]+}/message:send", handler("tenant-send"))
    router.add("GET", "/{tenant:[^/:]+}/tasks/{id:[^/:]+}", handler("tenant-get"))
    router.add("DELETE", "/{tenant:[^/:]+}/tasks/{id:[^/:]+}", handler("tenant-delete"))
    router.add("POST", "/travel/", handler("travel-jsonrpc"))
    return router


async def answered(router: Router, method: str, path: str) -> tuple[int, bytes]:
    async def read() -> bytes:
        return b""

    got = await router.answer(Incoming(method, path, CIMultiDict(), read))
    assert isinstance(got, Answer)
    return got.status, got.body


def test_a_word_first_segment_is_tried_before_a_variable_one() -> None:
    router = table()
    found, match, _ = router.resolve("POST", "/v1/message:send")
    assert found is not None and match == {}
    found, match, _ = router.resolve("POST", "/acme/message:send")
    assert found is not None and match == {"tenant": "acme"}
    found, match, _ = router.resolve("GET", "/v1/tasks/abc")
    assert found is not None and match == {"id": "abc"}  # 0.3's route, not tenant "v1"


async def test_static_paths_variables_head_and_the_verbs_a_path_takes() -> None:
    router = table()
    assert await answered(router, "POST", "/travel/") == (200, b"travel-jsonrpc")
    assert await answered(router, "GET", "/acme/tasks/t1") == (200, b"tenant-get")
    assert await answered(router, "HEAD", "/acme/tasks/t1") == (200, b"tenant-get")
    status, body = await answered(router, "PUT", "/acme/tasks/t1")
    assert status == 405 and b"use DELETE, GET, HEAD" in body
    status, body = await answered(router, "GET", "/no/such/thing/here")
    assert status == 404 and b"no A2A operation at GET /no/such/thing/here" in body
    status, _ = await answered(router, "GET", "/acme/tasks/a/b")  # one segment only
    assert status == 404
