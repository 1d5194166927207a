"""For webhook receivers: check that a notification really comes from the agent.

    receiver = PushReceiver(jwks_url="https://agent.example.com/.well-known/jwks.json",
                            audience="https://me.example.com/a2a-hook", token="s3cret")
    app.router.add_post("/a2a-hook", receiver.aiohttp_handler(on_event))

`verify(headers, body)` checks, in order: the config token
(`X-A2A-Notification-Token`), the JWT signature against the agent's JWKS
(cached; fetched again when a new key id appears, at most every 30 s), the
claims (`aud` = this webhook's URL, `iss` when given, `exp`, `iat` not older
than `max_age_s`), the body hash, and replay (each `jti` once). It returns the
event as a `StreamResponse`, or raises PushVerificationError saying which
check failed.
"""

from __future__ import annotations

import hmac
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import aiohttp
from aiohttp import web
from google.protobuf import json_format

from a2a_grpc.core.extras import missing
from a2a_grpc.generated.a2a_pb2 import StreamResponse
from a2a_grpc.push.digest import HEADER, body_digest

try:
    import jwt
except ImportError as exc:
    raise missing(exc, "checking push notification signatures", "auth") from None

TOKEN_HEADER = "X-A2A-Notification-Token"
ALGORITHMS = ["ES256", "RS256"]


class PushVerificationError(Exception):
    """A notification that must not be trusted; the message says why."""


class PushReceiver:
    def __init__(self, *, audience: str, jwks_url: str | None = None,
                 jwks: Mapping[str, Any] | None = None, token: str | None = None,
                 issuer: str | None = None, max_age_s: float = 600, leeway_s: float = 30,
                 session: aiohttp.ClientSession | None = None) -> None:
        if jwks_url is None and jwks is None and token is None:
            raise ValueError("give jwks_url (or jwks) to check signatures, or at least a token")
        self.audience = audience
        self.jwks_url = jwks_url
        self.token = token
        self.issuer = issuer
        self.max_age_s = max_age_s
        self.leeway_s = leeway_s
        self._session = session
        self._keys: dict[str, jwt.PyJWK] = {}
        self._fetched_at = 0.0
        self._seen: dict[str, float] = {}  # jti -> its exp
        if jwks is not None:
            self._load(jwks)

    def _load(self, jwks: Mapping[str, Any]) -> None:
        keys = {}
        for item in jwks.get("keys", []):
            try:
                keys[item["kid"]] = jwt.PyJWK(dict(item))
            except (KeyError, jwt.PyJWKError):
                continue  # a key we can't use is not a reason to trust none
        self._keys = keys

    async def _key(self, kid: str) -> jwt.PyJWK:
        if kid not in self._keys and self.jwks_url and time.monotonic() - self._fetched_at > 30:
            self._fetched_at = time.monotonic()
            session = self._session or aiohttp.ClientSession()
            try:
                async with session.get(self.jwks_url, timeout=aiohttp.ClientTimeout(10)) as r:
                    r.raise_for_status()
                    self._load(await r.json(content_type=None))
            except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
                raise PushVerificationError(f"cannot fetch the JWKS: {exc}") from None
            finally:
                if self._session is None:
                    await session.close()
        if kid not in self._keys:
            raise PushVerificationError(f"unknown signing key {kid!r}")
        return self._keys[kid]

    async def verify(self, headers: Mapping[str, str], body: bytes) -> StreamResponse:
        lowered = {k.lower(): v for k, v in headers.items()}
        if self.token is not None:
            sent = lowered.get(TOKEN_HEADER.lower(), "")
            if not hmac.compare_digest(sent.encode(), self.token.encode()):
                raise PushVerificationError("wrong or missing notification token")
        if self.jwks_url is not None or self._keys:
            await self._check_jwt(lowered, body)
        try:
            return json_format.Parse(body, StreamResponse(), ignore_unknown_fields=True)
        except (json_format.ParseError, UnicodeDecodeError) as exc:
            raise PushVerificationError(f"the body is not a StreamResponse: {exc}") from None

    async def _check_jwt(self, headers: Mapping[str, str], body: bytes) -> None:
        token = headers.get(HEADER.lower())
        if token is None and headers.get("authorization", "").lower().startswith("bearer "):
            token = headers["authorization"][7:]
        if not token:
            raise PushVerificationError(f"no signature ({HEADER} header)")
        try:
            kid = jwt.get_unverified_header(token).get("kid", "")
            key = await self._key(kid)
            claims = jwt.decode(
                token, key.key, algorithms=ALGORITHMS, audience=self.audience,
                issuer=self.issuer, leeway=self.leeway_s,
                options={"require": ["exp", "iat", "jti", "aud", "body_sha256"]})
        except jwt.PyJWTError as exc:
            raise PushVerificationError(f"bad signature or claims: {exc}") from None
        now = time.time()
        if claims["iat"] < now - self.max_age_s:
            raise PushVerificationError("the notification is too old")
        if not hmac.compare_digest(str(claims["body_sha256"]), body_digest(body)):
            raise PushVerificationError("the body does not match its signature")
        self._seen = {j: exp for j, exp in self._seen.items() if exp > now - self.leeway_s}
        if claims["jti"] in self._seen:
            raise PushVerificationError("replayed notification (jti seen before)")
        self._seen[claims["jti"]] = float(claims["exp"])

    def aiohttp_handler(
        self, on_event: Callable[[StreamResponse], Awaitable[None]]
    ) -> Callable[[web.Request], Awaitable[web.Response]]:
        """An aiohttp handler: 204 and `on_event(event)` when valid, else 401."""

        async def handle(request: web.Request) -> web.Response:
            body = await request.read()
            try:
                event = await self.verify(request.headers, body)
            except PushVerificationError as exc:
                return web.json_response({"error": str(exc)}, status=401)
            await on_event(event)
            return web.Response(status=204)

        return handle


