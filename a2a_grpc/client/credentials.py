"""Sending the credentials a client was given the way the agent's card asks.

- API key: in the header, query parameter or cookie the card's
  `apiKeySecurityScheme` names (gRPC has no query string: there it goes as
  metadata of that name, which our server reads too).
- Bearer token: `Authorization: Bearer ...` as given.
- HTTP Basic: `Authorization: Basic base64(user:password)`.
- OAuth 2 client credentials (RFC 6749 §4.4): the token endpoint is the
  card's `clientCredentials` flow `tokenUrl` (or the OpenID provider's
  `token_endpoint` from the card's `openIdConnectUrl`), unless given; the
  scopes asked are those the card's requirements name for that scheme. The
  token is fetched once, reused until shortly before it expires, and
  fetched again when the agent refuses it (UNAUTHENTICATED).
"""

from __future__ import annotations

import asyncio
import base64
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import aiohttp

from a2a_grpc.client.errors import AgentUnreachableError
from a2a_grpc.core.errors import UnauthenticatedError
from a2a_grpc.generated import a2a_pb2 as pb

EARLY_S = 30.0  # a token this close to its expiry is fetched again


@dataclass(frozen=True, slots=True)
class ClientCredentialsGrant:
    client_id: str
    client_secret: str
    token_url: str | None = None  # default: from the agent's card
    scopes: Sequence[str] | None = None  # default: what the card's requirements name


@dataclass(frozen=True, slots=True)
class ApiKeyPlace:
    location: str  # header, query or cookie
    name: str


def api_key_place(card: pb.AgentCard) -> ApiKeyPlace:
    for scheme in card.security_schemes.values():
        if scheme.WhichOneof("scheme") == "api_key_security_scheme":
            key = scheme.api_key_security_scheme
            if key.name and key.location.lower() in ("header", "query", "cookie"):
                return ApiKeyPlace(key.location.lower(), key.name)
    return ApiKeyPlace("header", "X-API-Key")


def put_credentials(headers: dict[str, str], bearer: str | None,
                    basic: tuple[str, str] | None, api_key: str | None, place: ApiKeyPlace,
                    binding: str) -> None:
    """Add the credentials given to a call's headers, where the card asks."""
    if bearer:
        headers["Authorization"] = f"Bearer {bearer}"
    elif basic is not None:
        headers["Authorization"] = "Basic " + base64.b64encode(":".join(basic).encode()).decode()
    if api_key and place.location == "cookie":
        old = headers.pop("Cookie", "")
        headers["Cookie"] = f"{old}; {place.name}={api_key}" if old else \
            f"{place.name}={api_key}"
    elif api_key and (place.location == "header" or binding == "GRPC"):
        headers[place.name] = api_key


def query_credentials(api_key: str | None, place: ApiKeyPlace) -> dict[str, str]:
    """The query parameters an HTTP call carries (an API key declared in the query)."""
    return {place.name: api_key} if api_key and place.location == "query" else {}


def _card_token_source(card: pb.AgentCard) -> tuple[str, str, list[str]]:
    """(scheme name, token URL or OIDC discovery URL, scopes) for a client-credentials grant."""
    for name, scheme in card.security_schemes.items():
        kind = scheme.WhichOneof("scheme")
        if kind == "oauth2_security_scheme":
            flows = scheme.oauth2_security_scheme.flows
            if flows.WhichOneof("flow") == "client_credentials":
                return name, flows.client_credentials.token_url, _scopes(card, name)
        elif kind == "open_id_connect_security_scheme":
            return (name, "oidc:" + scheme.open_id_connect_security_scheme.open_id_connect_url,
                    _scopes(card, name))
    raise UnauthenticatedError("the agent's card declares no OAuth 2 client-credentials flow "
                               "or OpenID Connect scheme: give the token endpoint")


def _scopes(card: pb.AgentCard, scheme: str) -> list[str]:
    named = [s for r in card.security_requirements if scheme in r.schemes
             for s in r.schemes[scheme].list]
    return list(dict.fromkeys(named))


class OAuth2Token:
    """One client's access token, fetched and refreshed as needed."""

    def __init__(self, grant: ClientCredentialsGrant, card: pb.AgentCard,
                 session: aiohttp.ClientSession) -> None:
        self.grant, self.card, self.session = grant, card, session
        self._token: str | None = None
        self._expires = 0.0
        self._lock = asyncio.Lock()

    async def get(self) -> str:
        async with self._lock:
            if self._token is None or time.monotonic() >= self._expires - EARLY_S:
                self._token, lifetime = await self._fetch()
                self._expires = time.monotonic() + lifetime
            return self._token

    def forget(self) -> None:
        self._token = None

    async def _endpoint(self) -> tuple[str, list[str]]:
        if self.grant.token_url:
            return self.grant.token_url, list(self.grant.scopes or ())
        _, url, scopes = _card_token_source(self.card)
        if url.startswith("oidc:"):
            found = (await self._json("GET", url[5:])).get("token_endpoint")
            if not isinstance(found, str) or not found:
                raise UnauthenticatedError(f"the OpenID provider at {url[5:]} names no "
                                           "token_endpoint: give the token URL")
            url = found
        return url, list(self.grant.scopes if self.grant.scopes is not None else scopes)

    async def _fetch(self) -> tuple[str, float]:
        url, scopes = await self._endpoint()
        form = {"grant_type": "client_credentials"}
        if scopes:
            form["scope"] = " ".join(scopes)
        secret = base64.b64encode(
            f"{self.grant.client_id}:{self.grant.client_secret}".encode()).decode()
        data = await self._json("POST", url, data=form,
                                headers={"Authorization": f"Basic {secret}"})
        token = data.get("access_token")
        if not isinstance(token, str) or not token:
            raise UnauthenticatedError(f"the token endpoint {url} gave no access_token")
        lifetime = data.get("expires_in")
        return token, float(lifetime) if isinstance(lifetime, int | float) else 3600.0

    async def _json(self, verb: str, url: str, **kw: Any) -> dict[str, Any]:
        try:
            async with self.session.request(verb, url, timeout=aiohttp.ClientTimeout(total=15),
                                            **kw) as resp:
                data = await resp.json(content_type=None)
                status = resp.status
        except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
            raise AgentUnreachableError(f"cannot get a token from {url}: {exc}") from None
        if not isinstance(data, dict):
            raise UnauthenticatedError(f"{url} did not answer a JSON object (HTTP {status})")
        if status != 200:
            why = data.get("error_description") or data.get("error") or f"HTTP {status}"
            raise UnauthenticatedError(f"the token endpoint {url} refused the client: {why}")
        return data
