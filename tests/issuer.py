"""A token issuer on a real socket for the auth tests: it serves its JWKS
(`/jwks.json`) and an OpenID discovery document, signs tokens, rotates its keys, and answers OAuth 2
client-credentials grants at `/token` (RFC 6749 §4.4, client authenticated
with HTTP Basic) for the clients it knows."""

from __future__ import annotations

import base64
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import jwt
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from cryptography.hazmat.primitives.asymmetric import rsa

ISSUER, AUDIENCE = "https://issuer.test", "a2a-grpc-tests"


@dataclass
class Issuer:
    server: TestServer
    keys: dict[str, Any]
    kid: str = "k1"
    # OAuth 2 clients: client id -> (secret, the subject its tokens name)
    clients: dict[str, tuple[str, str]] = field(default_factory=dict)
    token_lifetime: float = 300
    grants: list[dict[str, str]] = field(default_factory=list)  # each grant asked, in order
    discovery_names_token_endpoint: bool = True
    # The audiences of the next tokens granted (then AUDIENCE): a token the agent refuses.
    grant_audiences: list[str] = field(default_factory=list)

    @property
    def jwks_url(self) -> str:
        return str(self.server.make_url("/jwks.json"))

    @property
    def token_url(self) -> str:
        return str(self.server.make_url("/token"))

    def rotate(self) -> None:
        self.kid = f"k{len(self.keys) + 1}"
        self.keys = {self.kid: rsa.generate_private_key(public_exponent=65537, key_size=2048)}

    def token(self, sub: str = "alice", *, scope: str = "tasks", exp: float = 300,
              aud: str = AUDIENCE, iss: str = ISSUER, key: Any = None, kid: str | None = None
              ) -> str:
        claims = {"sub": sub, "scope": scope, "aud": aud, "iss": iss,
                  "exp": int(time.time() + exp), "iat": int(time.time())}
        return jwt.encode(claims, key or self.keys[self.kid], algorithm="RS256",
                          headers={"kid": kid or self.kid})


def _client_of(request: web.Request) -> str | None:
    kind, _, encoded = request.headers.get("Authorization", "").partition(" ")
    if kind != "Basic":
        return None
    return base64.b64decode(encoded).decode()


@pytest.fixture
async def issuer() -> AsyncIterator[Issuer]:
    holder: list[Issuer] = []

    async def jwks(_: web.Request) -> web.Response:
        keys = [{**jwt.algorithms.RSAAlgorithm.to_jwk(k.public_key(), as_dict=True), "kid": kid,
                 "use": "sig", "alg": "RS256"} for kid, k in holder[0].keys.items()]
        return web.json_response({"keys": keys})

    async def token(request: web.Request) -> web.Response:
        me = holder[0]
        form = dict(await request.post())
        me.grants.append({k: str(v) for k, v in form.items()})
        client_id, _, secret = (_client_of(request) or ":").partition(":")
        known = me.clients.get(client_id)
        if known is None or known[0] != secret:
            return web.json_response({"error": "invalid_client"}, status=401)
        if form.get("grant_type") != "client_credentials":
            return web.json_response({"error": "unsupported_grant_type"}, status=400)
        scope = str(form.get("scope", ""))
        return web.json_response({
            "access_token": me.token(known[1], scope=scope, exp=me.token_lifetime,
                                     aud=me.grant_audiences.pop(0) if me.grant_audiences
                                     else AUDIENCE),
            "token_type": "Bearer", "expires_in": int(me.token_lifetime), "scope": scope})

    async def discovery(_: web.Request) -> web.Response:
        me = holder[0]
        doc = {"issuer": str(me.server.make_url("")).rstrip("/"), "jwks_uri": me.jwks_url}
        if me.discovery_names_token_endpoint:
            doc["token_endpoint"] = me.token_url
        return web.json_response(doc)

    app = web.Application()
    app.router.add_get("/jwks.json", jwks)
    app.router.add_get("/.well-known/openid-configuration", discovery)
    app.router.add_post("/token", token)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    holder.append(Issuer(server, {"k1": rsa.generate_private_key(public_exponent=65537,
                                                                  key_size=2048)}))
    yield holder[0]
    await server.close()
