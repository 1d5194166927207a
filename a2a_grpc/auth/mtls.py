"""Mutual TLS (the card's `mtlsSecurityScheme`): the client certificate that
the TLS handshake verified against `--tls-client-ca` is the credential; its
common name is the subject. The handshake did the checking: a call without a
verified certificate simply carries no credential for this scheme."""

from __future__ import annotations

from a2a_grpc.auth.identity import Identity
from a2a_grpc.core.call import CallContext


class MtlsVerifier:
    challenge = 'Mutual realm="a2a"'  # not an HTTP scheme: it names the alternative

    def __init__(self, scheme: str = "mtls") -> None:
        self.scheme = scheme

    async def verify(self, ctx: CallContext) -> Identity | None:
        subject = ctx.peer() if ctx.peer is not None else None
        return None if not subject else Identity(subject, self.scheme)
