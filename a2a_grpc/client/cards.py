"""Reading an agent's card: fetching and checking it, choosing the interface
to call."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import aiohttp
from google.protobuf import json_format

from a2a_grpc.cards.card03 import card_in
from a2a_grpc.client.errors import (
    AgentUnreachableError,
    BadResponseError,
    NoUsableInterfaceError,
    not_http,
)
from a2a_grpc.generated import a2a_pb2 as pb

CARD_PATH = "/.well-known/agent-card.json"


def card_url(url: str) -> str:
    """Where the card of the agent at URL is (URL itself when it names a .json)."""
    return url if url.endswith(".json") else url.rstrip("/") + CARD_PATH


async def fetch_card_json(session: aiohttp.ClientSession, url: str,
                          headers: Mapping[str, str] | None = None) -> Any:
    """The agent card at URL (a base URL, or the card's own URL) as JSON, unchecked."""
    address = card_url(url)
    try:
        async with session.get(address, headers=headers,
                               timeout=aiohttp.ClientTimeout(total=15)) as resp:
            if resp.status != 200:
                raise BadResponseError(
                    f"no agent card at {address} (HTTP {resp.status}); is {url} an A2A agent?")
            return await resp.json(content_type=None)
    except (aiohttp.ClientConnectionError, TimeoutError) as exc:
        raise AgentUnreachableError(f"cannot reach {address}: {exc}") from None
    except aiohttp.ContentTypeError:
        raise BadResponseError(f"{address} is not JSON, so not an agent card") from None
    except aiohttp.ClientResponseError as exc:  # no HTTP status line: not an HTTP server
        raise not_http(address, exc) from None
    except ValueError:
        raise BadResponseError(f"{address} is not JSON, so not an agent card") from None


async def fetch_card(session: aiohttp.ClientSession, url: str) -> pb.AgentCard:
    """The agent card at URL (a base URL, or the card's own URL), validated.
    A server hosting several agents has no card of its own: the error then
    names the agents its catalog lists, to pick one."""
    try:
        data = await fetch_card_json(session, url)
    except BadResponseError:
        if url.endswith(".json") or not (names := await hosted_names(session, url)):
            raise
        raise NoUsableInterfaceError(
            f"{url} hosts several agents ({', '.join(names)}): name one with --agent NAME "
            f"(ClientOptions(agent=NAME)), or call {url.rstrip('/')}/NAME") from None
    address = card_url(url)
    try:
        if isinstance(data, dict) and "supportedInterfaces" not in data and "url" in data:
            card = card_in(data)  # an A2A 0.3 card: its agent is called in 0.3 (v03.py)
        else:
            card = json_format.ParseDict(data, pb.AgentCard(), ignore_unknown_fields=True)
    except (json_format.ParseError, TypeError, ValueError) as exc:
        raise BadResponseError(f"the card at {address} is not a valid AgentCard: {exc}") from None
    if not card.supported_interfaces:
        raise NoUsableInterfaceError(f"the card at {address} lists no interfaces")
    return card


CATALOG_PATH = "/.well-known/ai-catalog.json"
CARD_TYPE = "application/a2a-agent-card+json"


async def fetch_catalog(session: aiohttp.ClientSession, url: str) -> list[dict[str, Any]]:
    """The A2A agent cards' entries of the AI Catalog at the server URL
    (/.well-known/ai-catalog.json): each an `identifier` and a card `url`
    (or the card inline as `data`)."""
    address = url.rstrip("/") + CATALOG_PATH
    try:
        async with session.get(address, timeout=aiohttp.ClientTimeout(total=15)) as resp:
            if resp.status != 200:
                raise BadResponseError(f"no catalog at {address} (HTTP {resp.status}): does "
                                       f"{url} host several agents?")
            data = await resp.json(content_type=None)
    except (aiohttp.ClientConnectionError, TimeoutError) as exc:
        raise AgentUnreachableError(f"cannot reach {address}: {exc}") from None
    except aiohttp.ContentTypeError:
        raise BadResponseError(f"{address} is not JSON, so not a catalog") from None
    except aiohttp.ClientResponseError as exc:
        raise not_http(address, exc) from None
    except ValueError:
        raise BadResponseError(f"{address} is not JSON, so not a catalog") from None
    entries = data.get("entries") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise BadResponseError(f"{address} is not an AI Catalog (no entries)")
    return [e for e in entries if isinstance(e, dict) and e.get("type") == CARD_TYPE]


async def card_in_catalog(session: aiohttp.ClientSession, url: str, agent: str) -> str:
    """Where the card of the agent named `agent` in the catalog at URL is: the
    entry whose identifier ends with `:agent` (or `/agent`), or is `agent`."""
    entries = await fetch_catalog(session, url)
    for entry in entries:
        identifier = str(entry.get("identifier", ""))
        if identifier == agent or identifier.endswith((":" + agent, "/" + agent)):
            if not isinstance(entry.get("url"), str):
                raise BadResponseError(f"the catalog's entry for {agent!r} names no card URL")
            return str(entry["url"])
    names = ", ".join(_names(entries)) or "none"
    raise NoUsableInterfaceError(f"no agent {agent!r} at {url} (it hosts {names})")


async def hosted_names(session: aiohttp.ClientSession, url: str) -> list[str]:
    """The names of the agents the catalog at the server URL lists (what
    `card_in_catalog` takes), or none where there is no catalog to read."""
    try:
        entries = await fetch_catalog(session, url)
    except (BadResponseError, AgentUnreachableError):
        return []
    return _names(entries)


def _names(entries: list[dict[str, Any]]) -> list[str]:
    """The agents' names, as --agent takes them (an identifier's last part)."""
    return [str(e.get("identifier", "")).rsplit(":", 1)[-1].rsplit("/", 1)[-1]
            for e in entries if e.get("identifier")]


def choose_interface(card: pb.AgentCard, bindings: Sequence[str],
                     client_order: bool) -> pb.AgentInterface:
    """The card's first interface we speak, or (client_order) our first choice it
    offers; in A2A 1.x if it offers one, else in 0.3 (v03.py)."""
    usable = [i for i in card.supported_interfaces
              if i.protocol_binding in bindings and i.protocol_version.startswith("1.")] or [
        i for i in card.supported_interfaces
        if i.protocol_binding in bindings and i.protocol_version.startswith("0.3")]
    if client_order:
        usable.sort(key=lambda i: list(bindings).index(i.protocol_binding))
    if not usable:
        offered = ", ".join(f"{i.protocol_binding} {i.protocol_version}"
                            for i in card.supported_interfaces) or "nothing"
        raise NoUsableInterfaceError(
            f"{card.name or 'the agent'} offers {offered}; this client speaks "
            f"{', '.join(bindings)} over A2A 1.x or 0.3 (try another --binding)")
    return usable[0]
