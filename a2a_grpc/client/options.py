"""How an A2AClient connects and what it sends besides the request."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from a2a_grpc.client.credentials import ClientCredentialsGrant

Interceptor = Callable[[str, dict[str, str]], None]  # (rpc name, headers to send)


@dataclass(frozen=True, slots=True)
class ClientOptions:
    prefer: Sequence[str] = ()  # bindings, best first; empty = the card's own order
    headers: Mapping[str, str] = field(default_factory=dict)
    api_key: str | None = None
    bearer: str | None = None
    basic: tuple[str, str] | None = None  # (user, password): HTTP Basic
    oauth2: ClientCredentialsGrant | None = None  # fetch Bearer tokens (client credentials)
    tenant: str | None = None  # overrides the interface's tenant
    # On a server hosting several agents: the one of this name in the catalog at the
    # URL given (/.well-known/ai-catalog.json), its card read where the catalog says.
    agent: str | None = None
    timeout: float = 60.0  # per unary call; streams are not cut
    retries: int = 3
    backoff: float = 0.2
    resume: bool = True
    interceptors: Sequence[Interceptor] = ()
    ca_file: str | None = None  # trust this CA bundle (default: the system's)
    cert_file: str | None = None  # a client certificate for mutual TLS (PEM)...
    key_file: str | None = None  # ...and its key (default: in cert_file)
    record: bool = False  # report every exchange, raw, to the context's wire.Recorder
    # Extension URIs asked for on every call (A2A-Extensions); `A2AClient.activated()`
    # says which the server activated. An agent passes on the ones it was asked
    # for: ClientOptions(extensions=context.requested_extensions).
    extensions: Sequence[str] = ()

    @property
    def tls(self) -> bool:
        return bool(self.ca_file or self.cert_file)
