"""Who a call comes from, once a verifier has admitted it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from a2a_grpc.context import CallContext


@dataclass(frozen=True, slots=True)
class Identity:
    """`subject` owns the caller's tasks (tasks are scoped to it); `scheme` is
    the card's name of the scheme that admitted it; `scopes` what it may do;
    `claims` whatever the credential said (a JWT's claims, say)."""

    subject: str
    scheme: str
    scopes: frozenset[str] = frozenset()
    claims: Mapping[str, Any] = field(default_factory=dict)


class Verifier(Protocol):
    """Checks one security scheme of the card. Returns None when the call
    carries no credential for this scheme; raises UnauthenticatedError when
    it carries a bad one. Plug in your own for anything the built-in ones
    don't cover (see README, "Securing your agent")."""

    #  The `WWW-Authenticate` challenge naming this scheme (e.g. `Bearer`).
    challenge: str

    async def verify(self, ctx: CallContext) -> Identity | None: ...
