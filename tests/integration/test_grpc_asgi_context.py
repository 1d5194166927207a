"""What a servicer does with its context (grpc.aio's ServicerContext), on
grpc.aio and carried by pyvoy side by side: a status set rather than
raised, trailing and initial metadata, `-bin` values, the deadline left,
writes instead of yields, a servicer that fails. The carried side must
answer grpc.aio's client as grpc.aio does."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import grpc
import pytest

from a2a_grpc.grpc_edge.asgi import GrpcApp
from tests.carried import carried

pytest.importorskip("pyvoy", reason="the a2a-grpc[pyvoy] extra is not installed")


async def status(request: bytes, context: Any) -> bytes:
    context.set_code(grpc.StatusCode.NOT_FOUND)
    context.set_details("gone élsewhere")
    context.set_trailing_metadata((("why", "moved"), ("where-bin", b"\x00\x01")))
    return b"not sent"


async def remaining(request: bytes, context: Any) -> bytes:
    left = context.time_remaining()
    return b"none" if left is None else str(round(left)).encode()


async def meta(request: bytes, context: Any) -> bytes:
    got = dict(context.invocation_metadata())
    await context.send_initial_metadata((("echo", got.get("x-echo", "")),
                                         ("raw-bin", got.get("x-raw-bin", b""))))
    peer: str = context.peer()
    return peer.split(":")[0].encode()


async def written(request: bytes, context: Any) -> None:
    for n in range(int(request)):
        await context.write(str(n).encode())


async def aborted(request: bytes, context: Any) -> bytes:
    await context.abort(grpc.StatusCode.PERMISSION_DENIED, "not yours",
                        (("hint", "ask"),))
    return b""


async def boom(request: bytes, context: Any) -> bytes:
    raise ValueError("a servicer's own mistake")


async def own_timeout(request: bytes, context: Any) -> bytes:
    raise TimeoutError("a servicer's own, not the call's deadline")


def handlers() -> grpc.GenericRpcHandler:
    unary = grpc.unary_unary_rpc_method_handler
    return grpc.method_handlers_generic_handler("t.T", {
        "Status": unary(status), "Remaining": unary(remaining), "Meta": unary(meta),
        "Written": grpc.unary_stream_rpc_method_handler(written),
        "Aborted": unary(aborted), "Boom": unary(boom), "OwnTimeout": unary(own_timeout)})


def carried_app() -> GrpcApp:
    app = GrpcApp()
    app.add_generic_rpc_handlers((handlers(),))
    return app


@asynccontextmanager
async def served(carrier: str) -> AsyncIterator[str]:
    if carrier == "pyvoy":
        async with carried("tests.integration.test_grpc_asgi_context:carried_app") as port:
            yield f"127.0.0.1:{port}"
        return
    server = grpc.aio.server()
    server.add_generic_rpc_handlers((handlers(),))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        yield f"127.0.0.1:{port}"
    finally:
        await server.stop(0)


async def seen(target: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    async with grpc.aio.insecure_channel(target) as channel:
        def call(name: str) -> Any:
            return channel.unary_unary(f"/t.T/{name}")

        for name in ("Status", "Aborted", "Boom", "OwnTimeout"):
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await call(name)(b"", timeout=30)
            trailing = {k: v for k, v in (info.value.trailing_metadata() or ())}
            out[name] = (info.value.code(), info.value.details(),
                         {k: trailing.get(k) for k in ("why", "where-bin", "hint")})
        out["Remaining"] = (await call("Remaining")(b"", timeout=30),
                            await call("Remaining")(b""))
        meta_call = call("Meta")(b"", metadata=(("x-echo", "hi"), ("x-raw-bin", b"\xff\x00")))
        initial = dict(await meta_call.initial_metadata())
        out["Meta"] = (await meta_call, initial.get("echo"), initial.get("raw-bin"))
        stream = channel.unary_stream("/t.T/Written")(b"3")
        out["Written"] = ([m async for m in stream], await stream.code())
    return out


async def test_a_servicers_context_answers_as_on_grpc_aio() -> None:
    async with served("grpc.aio") as target:
        over_aio = await seen(target)
    async with served("pyvoy") as target:
        over_pyvoy = await seen(target)
    assert over_pyvoy == over_aio
    assert over_pyvoy["Status"] == (grpc.StatusCode.NOT_FOUND, "gone élsewhere", {
        "why": "moved", "where-bin": b"\x00\x01", "hint": None})
    assert over_pyvoy["Aborted"][:2] == (grpc.StatusCode.PERMISSION_DENIED, "not yours")
    assert over_pyvoy["Boom"][0] == over_pyvoy["OwnTimeout"][0] == grpc.StatusCode.UNKNOWN
    assert over_pyvoy["Remaining"] == (b"30", b"none")
    assert over_pyvoy["Meta"] == (b"ipv4", "hi", b"\xff\x00")
    assert over_pyvoy["Written"] == ([b"0", b"1", b"2"], grpc.StatusCode.OK)
