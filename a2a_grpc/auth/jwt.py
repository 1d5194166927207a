"""Bearer JWTs (the card's `httpAuthSecurityScheme` with scheme Bearer, or an
OAuth 2 / OpenID Connect scheme): verified against static keys or a JWKS URL
(found from an OpenID discovery document when given one).

Checked: the signature with an algorithm from the allow-list (never `none`),
`exp` and `sub` (required), `nbf`, `iat`, the issuer and audience when configured, a
small leeway for clock skew. Scopes come from `scope` (space-separated) or
`scp` (a list); the subject from `sub`.

The JWKS is fetched once and cached for `max_age` seconds; a token signed by
a key id the cache lacks makes an early refetch (the issuer rotated its
keys); such refetches happen at most once per `min_refetch` seconds, so a
stream of bad key ids cannot turn into a stream of fetches.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Any

import aiohttp

from a2a_grpc.auth.identity import Identity
from a2a_grpc.core.call import CallContext
from a2a_grpc.core.errors import UnauthenticatedError
from a2a_grpc.core.extras import missing

try:
    import jwt
except ImportError as exc:
    raise missing(exc, "JWT callers (--jwt-jwks, --jwt-key, --oidc-issuer)", "auth") from None

DEFAULT_ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "ES256", "ES384", "EdDSA")


class Jwks:
    """Signing keys by key id, from a JWKS URL (or an OpenID discovery URL)."""

    def __init__(self, url: str, *, discovery: bool = False, max_age: float = 300.0,
                 min_refetch: float = 10.0, timeout: float = 5.0) -> None:
        self.url, self.discovery = url, discovery
        self.max_age, self.min_refetch, self.timeout = max_age, min_refetch, timeout
        self._keys: dict[str, Any] = {}
        self._fetched = self._missed = -float("inf")
        self._lock = asyncio.Lock()

    async def key(self, kid: str | None) -> Any:
        now = time.monotonic()
        if now - self._fetched > self.max_age:
            await self._refresh(now)
        elif kid not in self._keys and now - self._missed > self.min_refetch:
            self._missed = now  # an unknown key id: look again, at most this often
            await self._refresh(now)
        if kid is None and len(self._keys) == 1:
            return next(iter(self._keys.values()))
        found = self._keys.get(kid or "")
        if found is None:
            raise UnauthenticatedError(f"the token's signing key {kid!r} is not one of the "
                                       "issuer's keys", challenge=_challenge("invalid_token"))
        return found

    async def _refresh(self, started: float) -> None:
        async with self._lock:
            if self._fetched >= started:  # another call refreshed meanwhile
                return
            try:
                async with aiohttp.ClientSession(
                        timeout=aiohttp.ClientTimeout(total=self.timeout)) as http:
                    url = self.url
                    if self.discovery:
                        url = (await _json(http, url))["jwks_uri"]
                    keys = jwt.PyJWKSet.from_dict(await _json(http, url))
            except Exception as exc:  # the issuer is down: keep the keys we had
                if not self._keys:
                    raise UnauthenticatedError(
                        "the token's issuer keys could not be fetched; try again later",
                        challenge=_challenge("invalid_token")) from exc
                self._fetched = time.monotonic()
                return
            self._keys = {k.key_id or "": k.key for k in keys.keys}
            self._fetched = time.monotonic()


async def _json(http: aiohttp.ClientSession, url: str) -> Any:
    async with http.get(url) as resp:
        resp.raise_for_status()
        return await resp.json(content_type=None)


def _challenge(error: str = "", description: str = "") -> str:
    parts = ['Bearer realm="a2a"']
    if error:
        parts.append(f'error="{error}"')
    if description:
        parts.append('error_description="' + description.replace('"', "'") + '"')
    return ", ".join(parts)


class JwtVerifier:
    def __init__(self, scheme: str, *, jwks: Jwks | None = None, keys: Sequence[Any] = (),
                 issuer: str | None = None, audience: str | None = None,
                 algorithms: Sequence[str] = DEFAULT_ALGORITHMS, leeway: float = 30.0) -> None:
        if jwks is None and not keys:
            raise ValueError(f"security scheme {scheme!r} needs a JWKS URL or a key")
        if "none" in {a.lower() for a in algorithms}:
            raise ValueError("the 'none' algorithm is never accepted")
        self.scheme, self.jwks, self.keys = scheme, jwks, list(keys)
        self.issuer, self.audience = issuer, audience
        self.algorithms, self.leeway = list(algorithms), leeway
        self.challenge = _challenge()

    async def verify(self, ctx: CallContext) -> Identity | None:
        header = ctx.metadata.get("authorization", "")
        kind, _, token = header.partition(" ")
        if kind.lower() != "bearer" or not token.strip():
            return None
        token = token.strip()
        try:
            kid = jwt.get_unverified_header(token).get("kid")
        except jwt.PyJWTError as exc:
            raise self._bad(f"the bearer token is not a JWT: {exc}") from None
        if kid is not None and not isinstance(kid, str):
            raise self._bad("the bearer token's kid must be a string")
        candidates = [await self.jwks.key(kid)] if self.jwks is not None else self.keys
        claims: dict[str, Any] | None = None
        error: jwt.PyJWTError | None = None
        for key in candidates:
            try:
                claims = jwt.decode(
                    token, key, algorithms=self.algorithms, audience=self.audience,
                    issuer=self.issuer, leeway=self.leeway,
                    options={"require": ["exp", "sub"], "verify_aud": self.audience is not None})
                break
            except jwt.InvalidSignatureError as exc:
                error = exc  # maybe another of the static keys
            except jwt.PyJWTError as exc:
                raise self._bad(f"the bearer token is not valid: {exc}") from None
        if claims is None:
            raise self._bad(f"the bearer token is not valid: {error}")
        scope, scp = claims.get("scope"), claims.get("scp")
        listed = scope.split() if isinstance(scope, str) else scp if isinstance(scp, list) else []
        if not all(isinstance(s, str) for s in listed):
            raise self._bad("the bearer token's scp claim must be a list of strings")
        return Identity(str(claims["sub"]), self.scheme, frozenset(listed), claims)

    @staticmethod
    def _bad(why: str) -> UnauthenticatedError:
        return UnauthenticatedError(why, challenge=_challenge("invalid_token", why))
