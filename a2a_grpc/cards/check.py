"""Checking an agent card, as JSON, against A2A 1.0: findings, not a verdict.

Which fields are required comes from the proto itself (its
`google.api.field_behavior = REQUIRED` annotations), so the rule lives in one
place; on top of that, what the spec says in prose: interface URLs and
versions, security schemes complete and named by the requirements that use
them, unique skill ids, media types. Whether the interfaces answer is for a
caller with a client to find out (the inspector probes them).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from google.api import field_behavior_pb2
from google.protobuf import json_format
from google.protobuf.descriptor import Descriptor, FieldDescriptor

from a2a_grpc.core import media
from a2a_grpc.generated import a2a_pb2 as pb

BINDINGS = ("JSONRPC", "GRPC", "HTTP+JSON")
VERSIONS = ("1.0", "0.3")  # what this project's clients and servers speak
API_KEY_PLACES = ("query", "header", "cookie")
LEGACY = {"url", "preferredTransport", "additionalInterfaces", "protocolVersion",
          "supportsAuthenticatedExtendedCard", "security"}  # the A2A 0.3 card's top-level fields
MEDIA_TYPE = re.compile(r"^[\w.+-]+/[\w.+*-]+(\s*;.*)?$")


@dataclass(frozen=True, slots=True)
class Finding:
    level: str  # "error": breaks the spec; "warning": likely to trouble clients; "info"
    where: str  # a JSON path, e.g. supportedInterfaces[0].url
    message: str

    def json(self) -> dict[str, str]:
        return {"level": self.level, "where": self.where, "message": self.message}


def check_card(card: Any) -> list[Finding]:
    """The card's problems, errors first; [] when it is a sound A2A 1.0 card."""
    if not isinstance(card, dict):
        return [Finding("error", "", f"a card is a JSON object, not {type(card).__name__}")]
    found: list[Finding] = []
    _required(card, pb.AgentCard.DESCRIPTOR, "", found)
    try:
        json_format.ParseDict(card, pb.AgentCard(), ignore_unknown_fields=True)
    except json_format.ParseError as exc:
        found.append(Finding("error", "", f"not an AgentCard: {exc}"))
    legacy = sorted(LEGACY & card.keys())
    if legacy:
        found.append(Finding("info", "", "A2A 0.3 fields for 0.3 clients beside the 1.0 ones ("
                             + ", ".join(legacy) + "): 1.0 readers ignore them, a strict 1.0 "
                             "schema rejects them"))
    _interfaces(_list(card.get("supportedInterfaces")), found)
    _security(card, found)
    _skills(card, found)
    for key in ("documentationUrl", "iconUrl"):
        if key in card and not _is_url(card[key]):
            found.append(Finding("warning", key, f"not an absolute http(s) URL: {card[key]!r}"))
    order = {"error": 0, "warning": 1, "info": 2}
    return sorted(found, key=lambda f: order[f.level])


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _is_url(value: Any) -> bool:
    parts = urlsplit(str(value))
    return parts.scheme in ("http", "https") and bool(parts.netloc)


def _required(data: dict[str, Any], descriptor: Descriptor | Any, path: str,
              found: list[Finding]) -> None:
    """REQUIRED fields present and not empty, in this message and the ones inside."""
    for field in descriptor.fields:
        where = f"{path}.{field.json_name}" if path else field.json_name
        value = data.get(field.json_name, data.get(field.name))
        behaviors = field.GetOptions().Extensions[field_behavior_pb2.field_behavior]
        single_message = field.type == FieldDescriptor.TYPE_MESSAGE and not field.is_repeated
        empty = value is None or (not single_message and value in ("", [], {}))
        if field_behavior_pb2.REQUIRED in behaviors and empty:  # a message may be {}
            kind = "missing" if value is None else "empty"
            found.append(Finding("error", where, f"required, {kind}"))
            continue
        inside = field.message_type
        if inside is None or value is None:
            continue
        if inside.GetOptions().map_entry:
            inner = inside.fields_by_name["value"].message_type
            if inner is not None:
                for key, item in _dict(value).items():
                    _required(_dict(item), inner, f"{where}.{key}", found)
        elif field.is_repeated:
            for i, item in enumerate(_list(value)):
                _required(_dict(item), inside, f"{where}[{i}]", found)
        else:
            _required(_dict(value), inside, where, found)


def _interfaces(interfaces: list[Any], found: list[Finding]) -> None:
    speaks_1x = False
    for i, item in enumerate(interfaces):
        face, where = _dict(item), f"supportedInterfaces[{i}]"
        binding, url = str(face.get("protocolBinding", "")), str(face.get("url", ""))
        version = str(face.get("protocolVersion", ""))
        if binding and binding not in BINDINGS:
            found.append(Finding("info", f"{where}.protocolBinding",
                                 f"{binding!r} is not one of A2A's bindings ({', '.join(BINDINGS)})"
                                 ": only clients that know it can use this interface"))
        if url and binding in ("JSONRPC", "HTTP+JSON") and not _is_url(url):
            found.append(Finding("error", f"{where}.url",
                                 f"{binding} needs an absolute http(s) URL, not {url!r}"))
        if url and binding == "GRPC" and not re.match(r"^(grpcs?://)?[^/\s]+:\d+/?$", url):
            found.append(Finding("warning", f"{where}.url",
                                 f"gRPC addresses are host:port, not {url!r}"))
        if version and not re.match(r"^\d+\.\d+(\.\d+)?$", version):
            found.append(Finding("error", f"{where}.protocolVersion",
                                 f"a version is MAJOR.MINOR, not {version!r}"))
        elif version and version not in VERSIONS:
            found.append(Finding("info", f"{where}.protocolVersion",
                                 f"A2A {version}: this inspector knows {', '.join(VERSIONS)}"))
        speaks_1x |= version.startswith("1.") and binding in BINDINGS
    if interfaces and not speaks_1x:
        found.append(Finding("error", "supportedInterfaces",
                             "no A2A 1.x interface on a standard binding: 1.0 clients cannot "
                             "call this agent"))


def _security(card: dict[str, Any], found: list[Finding]) -> None:
    schemes = _dict(card.get("securitySchemes"))
    for name, raw in schemes.items():
        scheme, where = _dict(raw), f"securitySchemes.{name}"
        kinds = [k for k in scheme if k.endswith("SecurityScheme")]
        if len(kinds) != 1:
            found.append(Finding("error", where, "a scheme is exactly one of apiKeySecurityScheme,"
                                 " httpAuthSecurityScheme, oauth2SecurityScheme, "
                                 f"openIdConnectSecurityScheme, mtlsSecurityScheme; has {kinds}"))
            continue
        body = _dict(scheme[kinds[0]])
        if kinds[0] == "apiKeySecurityScheme" and body.get("location") and \
                str(body["location"]).lower() not in API_KEY_PLACES:
            found.append(Finding("error", f"{where}.apiKeySecurityScheme.location",
                                 f"one of {', '.join(API_KEY_PLACES)}, not {body['location']!r}"))
        if kinds[0] == "openIdConnectSecurityScheme" and body.get("openIdConnectUrl") and \
                not _is_url(body["openIdConnectUrl"]):
            found.append(Finding("error", f"{where}.openIdConnectSecurityScheme.openIdConnectUrl",
                                 "not an absolute URL"))
        if kinds[0] == "oauth2SecurityScheme":
            _flows(_dict(body.get("flows")), f"{where}.oauth2SecurityScheme.flows", found)
    requirements = [("securityRequirements", r) for r in _list(card.get("securityRequirements"))]
    for i, skill in enumerate(_list(card.get("skills"))):
        requirements += [(f"skills[{i}].securityRequirements", r)
                         for r in _list(_dict(skill).get("securityRequirements"))]
    for where, requirement in requirements:
        for name in _dict(_dict(requirement).get("schemes")):
            if name not in schemes:
                found.append(Finding("error", where, f"names the scheme {name!r}, which "
                                     "securitySchemes does not define"))


def _flows(flows: dict[str, Any], where: str, found: list[Finding]) -> None:
    if len(flows) != 1:
        found.append(Finding("error", where, f"exactly one flow, not {len(flows)}"))
    for kind, flow in flows.items():
        if kind in ("implicit", "password"):
            found.append(Finding("warning", f"{where}.{kind}", "deprecated in A2A 1.0: use "
                                 "authorizationCode (with PKCE), clientCredentials or deviceCode"))
        for key, url in _dict(flow).items():
            if key.endswith("Url") and url and not str(url).startswith("https://"):
                found.append(Finding("warning", f"{where}.{kind}.{key}",
                                     f"OAuth endpoints use TLS (https://), not {url!r}"))


def _skills(card: dict[str, Any], found: list[Finding]) -> None:
    seen: set[str] = set()
    for i, raw in enumerate(_list(card.get("skills"))):
        skill_id = _dict(raw).get("id")
        if skill_id and skill_id in seen:
            found.append(Finding("error", f"skills[{i}].id", f"{skill_id!r} twice"))
        seen.add(str(skill_id))
    places = [("defaultInputModes", card.get("defaultInputModes")),
              ("defaultOutputModes", card.get("defaultOutputModes"))]
    for i, raw in enumerate(_list(card.get("skills"))):
        places += [(f"skills[{i}].{k}", _dict(raw).get(k)) for k in ("inputModes", "outputModes")]
    for where, modes in places:
        for mode in _list(modes):
            if MEDIA_TYPE.match(str(mode)):
                continue
            word = str(mode).strip().lower()
            if word in media.WORDS:
                found.append(Finding("warning", where, f"{mode!r} is a bare word, not a media "
                                     f"type: this server reads it as {media.WORDS[word]}, "
                                     "others may refuse it; write a media type (text/plain)"))
            else:
                found.append(Finding("warning", where, f"{mode!r} is not a media type "
                                     "(type/subtype): it accepts nothing"))
