"""An OTLP/HTTP trace receiver for `make bench --only observe`: answers every
export with 200 and counts the bytes and requests it got (GET /count). It
prints its port once bound; it stands in for a collector, doing no work."""

from __future__ import annotations

import asyncio
import sys

from aiohttp import web

from .servers import LOADGEN_CPU, pin


async def main() -> None:
    got = {"requests": 0, "bytes": 0}

    async def traces(request: web.Request) -> web.Response:
        got["bytes"] += len(await request.read())
        got["requests"] += 1
        return web.Response(body=b"", content_type="application/x-protobuf")

    async def count(_: web.Request) -> web.Response:
        return web.json_response(got)

    app = web.Application(client_max_size=64 << 20)
    app.router.add_post("/v1/traces", traces)
    app.router.add_get("/count", count)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    print(runner.addresses[0][1], flush=True)
    await asyncio.Event().wait()


if __name__ == "__main__":
    pin(LOADGEN_CPU)
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        sys.exit(0)
