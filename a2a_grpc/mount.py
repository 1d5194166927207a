"""Mount an agent in a web app you already run: an ASGI application for
FastAPI, Starlette, uvicorn or hypercorn (docs/mounting.md).

    from a2a_grpc.mount import A2AApp

    a2a = A2AApp(MyAgent(), public_url="https://api.example.com/a2a")
    app = FastAPI(lifespan=a2a.lifespan)
    app.mount("/a2a", a2a)
"""

from a2a_grpc.app.mounted import A2AApp
from a2a_grpc.app.settings import Network, ServeSettings, Store
from a2a_grpc.core.call import Identity

__all__ = ["A2AApp", "Identity", "Network", "ServeSettings", "Store"]
