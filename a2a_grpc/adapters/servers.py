"""Framework servers that hold an a2a-sdk executor without the SDK's request
handler in them until they serve: AG2's `ag2.a2a.A2AServer` (a2a-sdk 1.x),
taken as its `build_*()` would take it: its executor, and the card it would
publish (the interfaces are the server's own)."""

from __future__ import annotations

from typing import Any

PLACEHOLDER_URL = "http://localhost/"  # the card's URL: replaced by the served interfaces


def executor_and_card(obj: Any) -> tuple[Any, Any] | None:
    """(the SDK executor, the card) of a framework server we know, else None."""
    module = type(obj).__module__
    if module.startswith("ag2.a2a") and hasattr(obj, "_executor"):
        return _ag2(obj)
    return None


def _ag2(server: Any) -> tuple[Any, Any]:
    """A2AServer(agent): its executor, and the card `build_jsonrpc` makes for
    the agent (`ag2.a2a.card.build_card`)."""
    from ag2.a2a.card import build_card

    card = build_card(server.agent, url=PLACEHOLDER_URL, transports=("jsonrpc",))
    return server._executor, card
