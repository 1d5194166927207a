"""One agent card for both dialects: beside 1.0's `supportedInterfaces`,
the 0.3 fields (`url`, `preferredTransport`, `additionalInterfaces`,
`protocolVersion`, `supportsAuthenticatedExtendedCard`) naming the interfaces
that also speak 0.3, without which 0.3 clients (a2a-sdk 0.3.x) refuse the
card; 1.0 clients ignore them, as they do on the official SDK's card.

0.3 is served on the same endpoints as 1.0: JSON-RPC on the same URL, gRPC
on the same address (service `a2a.v1.A2AService`), HTTP+JSON under `/v1/`
of the same base URL, which is where 0.3 clients append their paths.
"""

from __future__ import annotations

from typing import Any

from google.protobuf import json_format

from a2a_grpc.generated import a2a_pb2 as v1
from a2a_grpc.generated import a2a_v03_pb2 as v03

# The bindings that also serve 0.3, the preferred first: every 0.3 client speaks
# JSON-RPC (the 0.3 SDK's default), fewer gRPC.
SPEAK_V03 = ("JSONRPC", "HTTP+JSON", "GRPC")
VERSION = "0.3.0"


def with_v03_fields(data: dict[str, Any]) -> None:
    """Add the 0.3 card fields to a card in 1.0 ProtoJSON, in place."""
    old = sorted(({"url": i["url"], "transport": i["protocolBinding"]}
                  for i in data.get("supportedInterfaces", [])
                  if i.get("protocolBinding") in SPEAK_V03
                  and i.get("protocolVersion", "1.0").startswith("1.0")),  # once each
                 key=lambda i: SPEAK_V03.index(i["transport"]))
    if not old:
        return
    data["url"] = old[0]["url"]
    data["preferredTransport"] = old[0]["transport"]
    data["additionalInterfaces"] = old
    data["protocolVersion"] = VERSION
    data["supportsAuthenticatedExtendedCard"] = bool(
        data.get("capabilities", {}).get("extendedAgentCard"))
    if data.get("securityRequirements"):  # 0.3: [{scheme: [scopes]}]
        data["security"] = [{name: scopes.get("list", []) for name, scopes in
                             r.get("schemes", {}).items()} for r in data["securityRequirements"]]


def card_out(card: v1.AgentCard) -> v03.AgentCard:
    """The card as 0.3's proto has it (its gRPC GetAgentCard). The two protos
    share the names of what both have (skills, capabilities, security
    schemes...); what only 1.0 has is left out."""
    data = json_format.MessageToDict(card)
    with_v03_fields(data)
    data["security"] = data.get("securityRequirements", [])  # the same message in both protos
    out = json_format.ParseDict(data, v03.AgentCard(), ignore_unknown_fields=True)
    out.protocol_version = VERSION  # it is answering a 0.3 call
    return out


def card_in(data: dict[str, Any]) -> v1.AgentCard:
    """A 0.3 card (a top-level `url`, `preferredTransport`, `additionalInterfaces`)
    as 1.0's, its interfaces in `supportedInterfaces` with the card's
    `protocolVersion`, so a client picks one as from any card. 0.3's security
    schemes (OpenAPI-shaped) are left out: a caller passes its credentials itself.
    Raises ValueError when it is no card."""
    fields = {k: v for k, v in data.items() if k not in ("securitySchemes", "security")}
    card = json_format.ParseDict(fields, v1.AgentCard(), ignore_unknown_fields=True)
    version = str(data.get("protocolVersion") or VERSION)
    listed = [(data.get("url"), data.get("preferredTransport") or "JSONRPC"),
              *((i.get("url"), i.get("transport")) for i in data.get("additionalInterfaces") or []
                if isinstance(i, dict))]
    for url, binding in dict.fromkeys(listed):
        if isinstance(url, str) and isinstance(binding, str) and url:
            card.supported_interfaces.add(url=url, protocol_binding=binding.upper(),
                                          protocol_version=version)
    return card
