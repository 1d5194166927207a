"""An agent card written by hand or by another A2A SDK, as ours: a JSON file
in A2A 1.0's shape (`supportedInterfaces`) or 0.3's (`url`, `kind`-less
OpenAPI-style `securitySchemes`, `security`), as the official SDK's samples
write them. The interfaces it names are dropped by whoever serves it: the
server names its own."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from google.protobuf import json_format

from a2a_grpc.cards.card03 import card_in
from a2a_grpc.generated.a2a_pb2 import AgentCard

# A2A 0.3 (OpenAPI) security scheme `type` -> A2A 1.0's oneof field (ProtoJSON).
SCHEMES = {"apiKey": "apiKeySecurityScheme", "http": "httpAuthSecurityScheme",
           "oauth2": "oauth2SecurityScheme", "openIdConnect": "openIdConnectSecurityScheme",
           "mutualTLS": "mtlsSecurityScheme"}


def read_card(path: Path) -> AgentCard:
    """The card in the JSON file `path`; ValueError saying what is wrong."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise ValueError(f"cannot read the agent card {path}: {exc}") from exc
    try:
        return card_of(data)
    except ValueError as exc:
        raise ValueError(f"the agent card {path} is not an agent card: {exc}") from exc


def card_of(data: Any) -> AgentCard:
    """A card in either generation's JSON (a dict) as A2A 1.0's AgentCard."""
    if not isinstance(data, dict) or not isinstance(data.get("name"), str):
        raise ValueError("an agent card is a JSON object with a name")
    try:
        if not is_v03(data):
            return json_format.ParseDict(data, AgentCard(), ignore_unknown_fields=True)
        card = card_in(data)
        security: dict[str, Any] = {"securitySchemes": schemes_in(data.get("securitySchemes")),
                                    "securityRequirements": requirements_in(data.get("security"))}
        json_format.ParseDict(security, card, ignore_unknown_fields=True)
        return card
    except json_format.ParseError as exc:
        raise ValueError(str(exc)) from exc


def is_v03(data: dict[str, Any]) -> bool:
    """Written in A2A 0.3's shape: a top-level url, a 0.x protocolVersion, or
    OpenAPI-style security schemes (`type`)."""
    if "supportedInterfaces" in data or "supported_interfaces" in data:
        return False
    schemes = data.get("securitySchemes")
    return ("url" in data or str(data.get("protocolVersion", "")).startswith("0.")
            or (isinstance(schemes, dict)
                and any(isinstance(s, dict) and "type" in s for s in schemes.values())))


def schemes_in(raw: Any) -> dict[str, Any]:
    """0.3's OpenAPI-style schemes ({name: {"type": "apiKey", "in": ...}}) as 1.0's."""
    out: dict[str, Any] = {}
    for name, scheme in (raw or {}).items():
        if not isinstance(scheme, dict) or scheme.get("type") not in SCHEMES:
            continue
        body = {k: v for k, v in scheme.items() if k not in ("type", "in")}
        if scheme["type"] == "apiKey":
            body["location"] = scheme.get("in", "header")
        out[name] = {SCHEMES[scheme["type"]]: body}
    return out


def requirements_in(raw: Any) -> list[dict[str, Any]]:
    """0.3's `security` ([{scheme: [scopes]}]) as 1.0's securityRequirements."""
    return [{"schemes": {name: {"list": list(scopes or [])} for name, scopes in r.items()}}
            for r in (raw or []) if isinstance(r, dict)]
