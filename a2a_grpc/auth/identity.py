"""Who a call comes from, once a verifier has admitted it."""

from __future__ import annotations

from typing import Protocol

from a2a_grpc.core.call import CallContext, Identity

__all__ = ["Identity", "Verifier"]


class Verifier(Protocol):
    """Checks one security scheme of the card. Returns None when the call
    carries no credential for this scheme; raises UnauthenticatedError when
    it carries a bad one. Plug in your own for anything the built-in ones
    don't cover (see README, "Securing your agent")."""

    #  The `WWW-Authenticate` challenge naming this scheme (e.g. `Bearer`).
    challenge: str

    async def verify(self, ctx: CallContext) -> Identity | None: ...
