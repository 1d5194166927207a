"""The server's signing keys (`--push-keys`, `--card-keys`), read before
anything opens: a bad key, or keys asked for without the [auth] extra,
stops the start with one line.

The signing modules are imported only here and only when keys are asked for:
they need PyJWT and cryptography, which the base install leaves out."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from a2a_grpc.generated.a2a_pb2 import AgentCard

if TYPE_CHECKING:
    from a2a_grpc.push.signing import Signer, SigningKey


@dataclass(slots=True)
class Keys:
    push: list[SigningKey] = field(default_factory=list)
    card: list[SigningKey] = field(default_factory=list)

    def jwks(self) -> dict[str, Any] | None:
        """One key set for both (/.well-known/jwks.json), or None with no keys."""
        published = {k.kid: k.public_jwk for k in [*self.push, *self.card]}
        return {"keys": list(published.values())} if published else None

    def signer(self) -> Signer | None:
        """What signs push notifications; its issuer is set once the public URL is known."""
        if not self.push:
            return None
        from a2a_grpc.push.signing import Signer

        return Signer(self.push, issuer="")

    def sign_card(self, card: AgentCard, jku: str) -> AgentCard:
        if not self.card:
            return card
        from a2a_grpc.cards.signing import sign

        return sign(card, self.card[0], jku=jku)


def load(push_dir: Path | None, card_dir: Path | None) -> Keys:
    if push_dir is None and card_dir is None:
        return Keys()
    from a2a_grpc.push.signing import load_keys  # MissingExtraError without [auth]

    return Keys(push=load_keys(push_dir) if push_dir is not None else [],
                card=load_keys(card_dir, prefix="card") if card_dir is not None else [])
