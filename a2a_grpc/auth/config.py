"""`a2a-grpc serve`'s authentication settings (app/settings.py, Security): the
schemes they add to the card, and the verifiers that check them (README,
"Securing your agent").

Each configured scheme is one alternative: a caller passes with any of them.
- `--api-keys FILE`: lines `SUBJECT:KEY` (# comments); the key travels in
  the header `X-API-Key` unless `--api-key-in` / `--api-key-name` say
  otherwise. Card scheme `apiKey`.
- `--basic-users FILE`: lines `USER:HASH` from `a2a-grpc passwd USER`:
  HTTP Basic. Card scheme `basic`.
- `--jwt-jwks URL`, `--jwt-key PEM` (repeatable) or `--oidc-issuer URL`
  (its discovery document names the JWKS): Bearer JWTs, with
  `--jwt-issuer`, `--jwt-audience` and `--require-scope` (repeatable).
  Card scheme `bearer` (HTTP Bearer, JWT) or `oidc` (OpenID Connect);
  with `--oauth2-token-url URL` the JWT scheme is `oauth2` instead: an
  OAuth 2 client-credentials flow at that token endpoint, whose tokens
  (JWTs) are checked the same way.
- `--tls-client-ca` (see a2a_grpc/app/tls.py): a verified client certificate
  admits its common name. Card scheme `mtls`.
- `--authenticator SCHEME=MODULE:ATTR`: your own Verifier (an instance, or a
  factory called with no arguments) for a scheme the agent's card declares.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from a2a_grpc.auth.apikey import ApiKeyVerifier
from a2a_grpc.auth.basic import BasicVerifier, parse_users
from a2a_grpc.auth.identity import Verifier
from a2a_grpc.auth.mtls import MtlsVerifier
from a2a_grpc.generated.a2a_pb2 import AgentCard

if TYPE_CHECKING:  # JWTs need the [auth] extra; the other schemes do not
    from a2a_grpc.auth.jwt import JwtVerifier

DISCOVERY = "/.well-known/openid-configuration"
log = logging.getLogger("a2a_grpc.auth")


@dataclass(frozen=True, slots=True)
class AuthOptions:
    api_keys: Path | None = None
    api_key_in: str = "header"
    api_key_name: str = "X-API-Key"
    basic_users: Path | None = None
    jwt_jwks: str | None = None
    jwt_keys: tuple[Path, ...] = ()
    oidc_issuer: str | None = None
    oauth2_token_url: str | None = None
    jwt_issuer: str | None = None
    jwt_audience: str | None = None
    scopes: tuple[str, ...] = ()
    authenticators: dict[str, str] = field(default_factory=dict)  # scheme -> MODULE:ATTR
    mtls: bool = False  # client certificates are verified (--tls-client-ca): a credential

    @property
    def any(self) -> bool:
        return bool(self.api_keys or self.basic_users or self.jwt_jwks or self.jwt_keys
                    or self.oidc_issuer or self.authenticators or self.mtls)


def read_api_keys(path: Path) -> dict[str, str]:
    """key -> subject, from lines `SUBJECT:KEY`."""
    keys: dict[str, str] = {}
    for number, line in enumerate(_read(path, "--api-keys").decode().splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        subject, sep, key = line.partition(":")
        if not sep or not subject.strip() or not key.strip():
            raise ValueError(f"{path}:{number}: write SUBJECT:KEY")
        keys[key.strip()] = subject.strip()
    return keys


def configure(card: AgentCard, options: AuthOptions) -> dict[str, Verifier]:
    """Declare the configured schemes on `card` (in place) and return their verifiers."""
    verifiers: dict[str, Verifier] = {}
    if options.api_keys is not None:
        # A card that brings its own API key scheme (`serve --card`) keeps it: its
        # name, where the key travels and what it is called.
        name = next((n for n, s in card.security_schemes.items()
                     if s.WhichOneof("scheme") == "api_key_security_scheme"), "apiKey")
        scheme = card.security_schemes[name].api_key_security_scheme
        if not scheme.name:
            scheme.location, scheme.name = options.api_key_in, options.api_key_name
            scheme.description = "an API key issued by the agent's operator"
        verifiers[name] = ApiKeyVerifier(name, scheme.location, scheme.name,
                                         read_api_keys(options.api_keys))
    if options.basic_users is not None:
        http = card.security_schemes["basic"].http_auth_security_scheme
        http.scheme, http.description = "Basic", "a user name and password"
        verifiers["basic"] = BasicVerifier("basic", parse_users(
            _read(options.basic_users, "--basic-users").decode(), str(options.basic_users)))
    if options.oauth2_token_url and not (options.jwt_jwks or options.jwt_keys):
        raise ValueError("--oauth2-token-url: say how tokens are checked with --jwt-jwks "
                         "or --jwt-key")
    if options.jwt_jwks or options.jwt_keys:
        name = "oauth2" if options.oauth2_token_url else "bearer"
        if options.oauth2_token_url:
            flow = card.security_schemes[name].oauth2_security_scheme.flows.client_credentials
            flow.token_url = options.oauth2_token_url
            flow.scopes.update({s: s for s in options.scopes})
        else:
            http = card.security_schemes[name].http_auth_security_scheme
            http.scheme, http.bearer_format = "Bearer", "JWT"
        verifiers[name] = _jwt(name, options, options.jwt_jwks)
    if options.oidc_issuer:
        url = options.oidc_issuer.rstrip("/") + DISCOVERY
        card.security_schemes["oidc"].open_id_connect_security_scheme.open_id_connect_url = url
        verifiers["oidc"] = _jwt("oidc", options, url, discovery=True,
                                 issuer=options.jwt_issuer or options.oidc_issuer.rstrip("/"))
    if options.mtls:
        card.security_schemes["mtls"].mtls_security_scheme.description = (
            "a client certificate signed by the agent's client CA")
        verifiers["mtls"] = MtlsVerifier("mtls")
    required = {n for r in card.security_requirements for n in r.schemes}
    for name in [n for n in verifiers if n not in required]:
        card.security_requirements.add().schemes[name].list.extend(
            options.scopes if name in ("bearer", "oauth2", "oidc") else ())
    for name, target in options.authenticators.items():
        if name not in card.security_schemes:
            raise ValueError(f"--authenticator {name}: the agent's card declares no such "
                             "security scheme")
        verifiers[name] = _load(target)
    return verifiers


def _jwt(name: str, options: AuthOptions, jwks_url: str | None, discovery: bool = False,
         issuer: str | None = None) -> JwtVerifier:
    from a2a_grpc.auth.jwt import Jwks, JwtVerifier  # MissingExtraError without [auth]

    keys: list[Any] = [_read(path, "--jwt-key") for path in options.jwt_keys]  # PEM public keys
    jwks = Jwks(jwks_url, discovery=discovery) if jwks_url else None
    return JwtVerifier(name, jwks=jwks, keys=keys, issuer=issuer or options.jwt_issuer,
                       audience=options.jwt_audience)


def _read(path: Path, flag: str) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise ValueError(f"{flag} {path}: {exc.strerror or exc}") from None


def _load(target: str) -> Verifier:
    module, _, attr = target.partition(":")
    found = getattr(importlib.import_module(module), attr)
    verifier: Verifier = found() if callable(found) and not hasattr(found, "verify") else found
    return verifier


def reloader(options: AuthOptions, verifiers: Mapping[str, Verifier]) -> Callable[[], None]:
    """What reloads the API key and Basic user files into their verifiers (on
    SIGHUP). A file that can't be read or parsed leaves the verifier as it was."""

    def reload() -> None:
        keys, users = verifiers.get("apiKey"), verifiers.get("basic")
        if options.api_keys is not None and isinstance(keys, ApiKeyVerifier):
            try:
                keys.replace(read_api_keys(options.api_keys))
                log.info("API keys reloaded from %s", options.api_keys)
            except ValueError as exc:
                log.error("API keys not reloaded (keeping those in use): %s", exc)
        if options.basic_users is not None and isinstance(users, BasicVerifier):
            try:
                users.replace(parse_users(_read(options.basic_users, "--basic-users").decode(),
                                          str(options.basic_users)))
                log.info("Basic users reloaded from %s", options.basic_users)
            except ValueError as exc:
                log.error("Basic users not reloaded (keeping those in use): %s", exc)

    return reload
