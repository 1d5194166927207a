"""The demo agent on the ASGI face, for `make bench` (benchmarks/faces.py):

    python -m benchmarks.asgi_server uvicorn|fastapi HTTP_PORT GRPC_PORT STORE

`uvicorn`: a2a_grpc.mount.A2AApp alone; `fastapi`: mounted at the root of a
FastAPI app with no middleware of its own. uvicorn with its defaults
(uvloop, and httptools when installed, as `uvicorn[standard]` has it), no
access log.
"""

from __future__ import annotations

import sys

import uvicorn

from a2a_grpc.demos.demo import DemoAgent
from a2a_grpc.mount import A2AApp, Network, ServeSettings, Store


def main(mode: str, http: int, grpc: int, store: str) -> None:
    a2a = A2AApp(DemoAgent(), ServeSettings(network=Network(grpc_port=grpc),
                                            store=Store(url=store)),
                 public_url=f"http://127.0.0.1:{http}", grpc=True)
    app = a2a
    if mode == "fastapi":
        from fastapi import FastAPI

        app = FastAPI(lifespan=a2a.lifespan)  # type: ignore[assignment]
        app.mount("/", a2a)  # type: ignore[attr-defined]
    uvicorn.run(app, host="127.0.0.1", port=http, log_level="warning", access_log=False)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
