"""a2a_grpc.cards.check: what it finds in cards that break the spec, and that a
sound card (ours, as served) gives no error."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from google.protobuf import json_format

from a2a_grpc.cards.check import check_card
from a2a_grpc.demos.demo import demo_card


def sound() -> dict[str, Any]:
    card = json_format.MessageToDict(demo_card())
    card["supportedInterfaces"] = [
        {"url": "127.0.0.1:50051", "protocolBinding": "GRPC", "protocolVersion": "1.0"},
        {"url": "http://127.0.0.1:8080/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]
    return card


def found(card: Any) -> list[tuple[str, str, str]]:
    return [(f.level, f.where, f.message) for f in check_card(card)]


def test_a_sound_card_has_no_findings() -> None:
    assert found(sound()) == []


def with_(path: str, value: Any) -> dict[str, Any]:
    """The sound card with one change: `a.b[0].c` set (or removed, for None)."""
    card = sound()
    *parents, last = path.replace("[", ".").replace("]", "").split(".")
    node: Any = card
    for key in parents:
        node = node[int(key)] if key.isdigit() else node.setdefault(key, {})
    if value is None:
        del node[last]
    else:
        node[last] = copy.deepcopy(value)
    return card


@pytest.mark.parametrize(("path", "value", "level", "where", "says"), [
    ("name", None, "error", "name", "required, missing"),
    ("description", "", "error", "description", "required, empty"),
    ("skills[0].tags", None, "error", "skills[0].tags", "required, missing"),
    ("supportedInterfaces[1].url", "localhost/x", "error", "supportedInterfaces[1].url",
     "absolute http(s) URL"),
    ("supportedInterfaces[0].url", "http://grpc.example/", "warning",
     "supportedInterfaces[0].url", "host:port"),
    ("supportedInterfaces[1].protocolVersion", "one", "error",
     "supportedInterfaces[1].protocolVersion", "MAJOR.MINOR"),
    ("supportedInterfaces[1].protocolVersion", "2.0", "info",
     "supportedInterfaces[1].protocolVersion", "A2A 2.0"),
    ("supportedInterfaces[1].protocolBinding", "SOAP", "info",
     "supportedInterfaces[1].protocolBinding", "not one of A2A's bindings"),
    ("skills[1].id", "echo", "error", "skills[1].id", "'echo' twice"),
    ("defaultInputModes", ["text"], "warning", "defaultInputModes",
     "'text' is a bare word, not a media type: this server reads it as text/*"),
    ("skills[0].outputModes", ["task-status"], "warning", "skills[0].outputModes",
     "not a media type (type/subtype): it accepts nothing"),
    ("iconUrl", "icon.png", "warning", "iconUrl", "not an absolute"),
    ("url", "http://127.0.0.1:8080/", "info", "", "A2A 0.3 fields"),
    ("securitySchemes", {"k": {"apiKeySecurityScheme": {"location": "body", "name": "k"}}},
     "error", "securitySchemes.k.apiKeySecurityScheme.location", "one of query"),
    ("securitySchemes", {"k": {}}, "error", "securitySchemes.k", "exactly one of"),
    ("securitySchemes", {"o": {"openIdConnectSecurityScheme": {"openIdConnectUrl": "x"}}},
     "error", "securitySchemes.o.openIdConnectSecurityScheme.openIdConnectUrl",
     "not an absolute URL"),
    ("securitySchemes", {"o": {"oauth2SecurityScheme": {"flows": {"clientCredentials": {
        "tokenUrl": "http://auth/token", "scopes": {}}}}}}, "warning",
     "securitySchemes.o.oauth2SecurityScheme.flows.clientCredentials.tokenUrl", "TLS"),
    ("securitySchemes", {"o": {"oauth2SecurityScheme": {"flows": {"implicit": {
        "authorizationUrl": "https://auth/a", "scopes": {}}}}}}, "warning",
     "securitySchemes.o.oauth2SecurityScheme.flows.implicit", "deprecated"),
    ("securitySchemes", {"o": {"oauth2SecurityScheme": {"flows": {"clientCredentials": {
        "tokenUrl": "https://auth/token"}}}}}, "error",
     "securitySchemes.o.oauth2SecurityScheme.flows.clientCredentials.scopes",
     "required, missing"),
    ("securityRequirements", [{"schemes": {"bearer": {"list": []}}}], "error",
     "securityRequirements", "names the scheme 'bearer'"),
    ("skills[0].securityRequirements", [{"schemes": {"k": {"list": []}}}], "error",
     "skills[0].securityRequirements", "names the scheme 'k'"),
    ("provider", {"organization": "ACME"}, "error", "provider.url", "required, missing"),
    ("capabilities", {"streaming": "very"}, "error", "", "not an AgentCard"),
])
def test_what_it_finds(path: str, value: Any, level: str, where: str, says: str) -> None:
    findings = found(with_(path, value))
    assert any(f[0] == level and f[1] == where and says in f[2] for f in findings), findings


def test_no_1x_interface_and_not_an_object() -> None:
    card = with_("supportedInterfaces", [{"url": "http://a/", "protocolBinding": "JSONRPC",
                                         "protocolVersion": "0.3"}])
    assert ("error", "supportedInterfaces", "no A2A 1.x interface on a standard binding: 1.0 "
            "clients cannot call this agent") in found(card)
    assert found([]) == [("error", "", "a card is a JSON object, not list")]
    # errors come first
    levels = [f[0] for f in found(with_("name", None) | {"url": "x"})]
    assert levels == sorted(levels, key=["error", "warning", "info"].index)


def test_a_valid_security_setup_passes() -> None:
    card = sound()
    card["securitySchemes"] = {
        "key": {"apiKeySecurityScheme": {"location": "header", "name": "X-API-Key"}},
        "oauth": {"oauth2SecurityScheme": {"flows": {"authorizationCode": {
            "authorizationUrl": "https://auth/a", "tokenUrl": "https://auth/t",
            "scopes": {"read": "read"}, "pkceRequired": True}}}},
        "bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}},
        "mtls": {"mtlsSecurityScheme": {}}}
    card["securityRequirements"] = [{"schemes": {"key": {"list": []}}},
                                    {"schemes": {"oauth": {"list": ["read"]}}}]
    card["provider"] = {"organization": "ACME", "url": "https://acme.example"}
    assert found(card) == []
