"""API keys (the card's `apiKeySecurityScheme`): in a header, a query
parameter or a cookie, as the scheme declares. gRPC has no query string,
so a key declared in the query is also taken from metadata (a header) of
that name. Keys are compared by their
SHA-256 digest, so a lookup takes the same time whichever key is tried."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from http.cookies import CookieError, SimpleCookie

from a2a_grpc.auth.identity import Identity
from a2a_grpc.core.call import CallContext
from a2a_grpc.core.errors import UnauthenticatedError

LOCATIONS = ("header", "query", "cookie")


def _digest(key: str) -> bytes:
    return hashlib.sha256(key.encode()).digest()


class ApiKeyVerifier:
    def __init__(self, scheme: str, location: str, name: str, keys: Mapping[str, str]) -> None:
        """`keys`: each key -> the subject it stands for."""
        if location not in LOCATIONS:
            raise ValueError(f"API key location {location!r}: use one of {', '.join(LOCATIONS)}")
        if not keys:
            raise ValueError(f"security scheme {scheme!r} has no API keys configured")
        self.scheme, self.location, self.name = scheme, location, name
        self._subjects = {_digest(k): s for k, s in keys.items()}
        self.challenge = f'ApiKey realm="a2a", in="{location}", name="{name}"'

    def replace(self, keys: Mapping[str, str]) -> None:
        """Admit these keys from now on, and no others (the file was reloaded)."""
        if not keys:
            raise ValueError(f"security scheme {self.scheme!r} would have no API keys left")
        self._subjects = {_digest(k): s for k, s in keys.items()}

    def _presented(self, ctx: CallContext) -> str | None:
        if self.location == "header":
            return ctx.metadata.get(self.name.lower())
        if self.location == "query":
            return ctx.query.get(self.name) or ctx.metadata.get(self.name.lower())
        raw = ctx.metadata.get("cookie")
        if not raw:
            return None
        cookie = SimpleCookie()
        try:
            cookie.load(raw)
        except CookieError:
            return None  # an unreadable Cookie header carries no key
        morsel = cookie.get(self.name)
        return None if morsel is None else morsel.value

    async def verify(self, ctx: CallContext) -> Identity | None:
        key = self._presented(ctx)
        if key is None:
            return None
        subject = self._subjects.get(_digest(key))
        if subject is None:
            raise UnauthenticatedError(f"the API key in {self.location} {self.name!r} is not "
                                       "valid", challenge=self.challenge)
        return Identity(subject, self.scheme)
