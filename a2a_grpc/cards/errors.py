"""Errors of the card's parts that callers catch without loading them (signing.py
needs the [auth] extra)."""


class CardSignatureError(Exception):
    """The card has no signature, or none that verifies with the keys given."""
