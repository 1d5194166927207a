"""What the handler knows about a call besides its request message: its
service parameters and, once admitted (a2a_grpc/auth), who makes it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

CURRENT_VERSION = "1.0"
# The A2A 1.1 draft, served when the server's preview is on (handler/generations.py).
PREVIEW_VERSION = "1.1"


@dataclass(frozen=True, slots=True)
class Identity:
    """`subject` owns the caller's tasks (tasks are scoped to it); `scheme` is
    the card's name of the scheme that admitted it; `scopes` what it may do;
    `claims` whatever the credential said (a JWT's claims, say)."""

    subject: str
    scheme: str
    scopes: frozenset[str] = frozenset()
    claims: Mapping[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class CallContext:
    """Who is calling and with which service parameters (spec §3.2.6).

    `user` is the authenticated caller ("" for anonymous); tasks are scoped to
    it. `version` is the `A2A-Version` the client sent, None when it sent none.
    `extensions` are the URIs from `A2A-Extensions`. `metadata` holds the
    transport's headers or gRPC metadata, keys lower-cased.
    `client_task_ids`: a message naming a task that does not exist creates it
    under that id, as the first draft of A2A did (`tasks/send`); 1.0 calls
    never set it.
    `query`: an HTTP call's query parameters (empty on gRPC), where an API key
    may travel. `identity`: who the authenticator admitted (a2a_grpc/auth);
    None when the card asks for no credentials. `user` is its subject.
    `dialect`: the A2A dialect the call was written in when the edge
    translated it from an earlier one ("0.3", "0.1"); "" for 1.0; "1.1" for
    a call that asks for the A2A 1.1 draft (refused unless the preview is
    on). Push configs it sets are delivered in that dialect's shape.
    `denied_skills`: ids of the card's skills whose own securityRequirements
    this caller does not meet (the extended card omits them;
    RequestContext.require_skill refuses them).
    `activated`: the extensions activated for this call (the agent's, through
    RequestContext.activate_extension, and the server's own); the edges name
    them in the response (`A2A-Extensions`, gRPC initial metadata). One set
    for the call, shared by the copies layers make of its context.

    Not changed once made: a layer that changes something makes a copy
    (`dataclasses.replace`). Not frozen only because a frozen dataclass sets
    each of its fields through `object.__setattr__`, and one is made for
    every call (docs/benchmarks.md, "Measured reasons").
    """

    user: str = ""
    tenant: str = ""
    version: str | None = None
    extensions: frozenset[str] = frozenset()
    metadata: Mapping[str, str] = field(default_factory=dict)
    client_task_ids: bool = False
    dialect: str = ""
    query: Mapping[str, str] = field(default_factory=dict)
    identity: Identity | None = None
    # The verified client certificate's subject (mutual TLS), asked lazily:
    # None when the call came without TLS or without a client certificate.
    peer: Callable[[], str | None] | None = None
    denied_skills: frozenset[str] = frozenset()
    # The client's network address (IP, no port), asked lazily: how limits
    # tell anonymous callers apart.
    remote: Callable[[], str] | None = None
    activated: set[str] = field(default_factory=set)

    @classmethod
    def from_headers(cls, headers: Mapping[str, str], *, user: str = "",
                     lowered: bool = False,
                     peer: Callable[[], str | None] | None = None,
                     remote: Callable[[], str] | None = None) -> CallContext:
        """Build a context from HTTP headers or gRPC metadata (any key case;
        `lowered`: the keys already are lower case, and `headers` is the
        caller's to give away)."""
        if not lowered:
            headers = {k.lower(): v for k, v in headers.items()}
        # X-A2A-Extensions: the name A2A 0.3 gave the header.
        raw_ext = headers.get("a2a-extensions") or headers.get("x-a2a-extensions", "")
        extensions = (frozenset(x.strip() for x in raw_ext.split(",") if x.strip())
                      if raw_ext else frozenset())
        version = headers.get("a2a-version")
        if version is not None:
            version = version.strip()
        return cls(
            user=user,
            version=version,
            dialect=PREVIEW_VERSION if version and (
                version == PREVIEW_VERSION or version.startswith(PREVIEW_VERSION + ".")) else "",
            extensions=extensions,
            metadata=headers,
            peer=peer,
            remote=remote,
        )


def common_name(subject: str) -> str | None:
    """The CN of a certificate subject written as RFC 4514 says (`CN=alice,O=x`),
    as servers hand it to an app (the ASGI TLS extension's `client_cert_name`)."""
    for part in subject.split(","):
        key, _, value = part.strip().partition("=")
        if key.strip().upper() == "CN" and value:
            return value.strip()
    return None
