"""The agent card: built from the agent's own card and the interfaces served
(card.py), and signed (signing.py)."""

from a2a_grpc.cards.card import RESUMABLE_STREAMS, Interface, card_for, public_card

__all__ = ["RESUMABLE_STREAMS", "Interface", "card_for", "public_card"]
