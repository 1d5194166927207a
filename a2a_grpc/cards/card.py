"""The agent card a server publishes (spec §8), built by one pure function.

The agent says what it is (`card_for`: its own card, name, skills, modes,
the capabilities it implements). Once the ports are bound, `public_card`
adds what the server serves: one interface per binding, each with the
address clients use and protocol version 1.0, and the server's extensions
(resumable streams; signed push notifications when keys are configured).

Addresses follow the proto's AgentInterface.url: an absolute URL for the
HTTP bindings, `host:port` for gRPC (the official JS client hands the value
to grpc-js as it is). A wildcard bind address (0.0.0.0, ::) is never
advertised: `advertised_host` names the machine instead, and the operator
says what clients really use with --public-url / --grpc-public-address.
"""

from __future__ import annotations

import re
import socket
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from google.protobuf.struct_pb2 import Struct

from a2a_grpc.agent import AgentExecutor
from a2a_grpc.core.call import CURRENT_VERSION
from a2a_grpc.core.stream import RESUMABLE_STREAMS_URI
from a2a_grpc.generated.a2a_pb2 import AgentCard, AgentExtension, AgentInterface

RESUMABLE_STREAMS = AgentExtension(
    uri=RESUMABLE_STREAMS_URI,
    description=(
        "Every task event has a sequence number (the SSE id:; on gRPC the first event's "
        "number is in the a2a-first-event-id header, sent when the call declares this "
        "extension in a2a-extensions; later ones count up by one). "
        "SubscribeToTask with Last-Event-ID (HTTP) or a2a-last-event-id (gRPC metadata) "
        "replays every event after that number, then continues live; on a task that "
        "has ended it replays and closes."),
)
SIGNED_PUSH_URI = "urn:a2a-grpc:extension:signed-push:v1"
WILDCARDS = frozenset({"", "0.0.0.0", "::", "[::]", "*"})


@dataclass(frozen=True, slots=True)
class Interface:
    binding: str  # JSONRPC, HTTP+JSON, GRPC
    url: str
    tenant: str = ""  # what requests set to reach this agent on a server hosting several


@dataclass(frozen=True, slots=True)
class SignedPush:
    jwks_url: str
    header: str


def card_for(agent: AgentExecutor) -> AgentCard:
    """The agent's own card (its `card` attribute), or a minimal one; no interfaces."""
    own = getattr(agent, "card", None)
    if isinstance(own, AgentCard):
        card = AgentCard()
        card.CopyFrom(own)
    else:
        card = minimal_card(agent)
    del card.supported_interfaces[:]
    if agent.offers_extended_card:
        card.capabilities.extended_agent_card = True
    return card


def minimal_card(agent: object) -> AgentCard:
    """A card for an agent that brings none: named after its class, described
    by its docstring's first line, text in and out, streaming, and one skill
    of the same name and description (A2A requires a skill; a 0.3 client
    refuses a card without one)."""
    name = type(agent).__name__
    doc = (type(agent).__doc__ or "").strip().splitlines()
    description = doc[0] if doc else f"{name} agent"
    card = AgentCard(name=name, version="0.0.0", description=description,
                     default_input_modes=["text/plain"], default_output_modes=["text/plain"])
    card.capabilities.streaming = True
    card.skills.add(id=_snake(name), name=name, description=description, tags=[_snake(name)])
    return card


def _snake(name: str) -> str:
    """HelloWorldAgentExecutor -> hello_world_agent_executor."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


def public_card(own: AgentCard, interfaces: Sequence[Interface],
                signed_push: SignedPush | None = None, *, resumable: bool = True,
                versions: Sequence[str] = (CURRENT_VERSION,)) -> AgentCard:
    """`own` listing exactly `interfaces` (the first is preferred) once per
    A2A version in `versions` (all of the first version's come first), with
    the server's extensions. `own` is not changed."""
    out = AgentCard()
    out.CopyFrom(own)
    del out.supported_interfaces[:]
    for version in versions:
        for i in interfaces:
            out.supported_interfaces.append(AgentInterface(
                url=i.url, protocol_binding=i.binding, protocol_version=version,
                tenant=i.tenant))
    extensions = out.capabilities.extensions
    if resumable and not any(x.uri == RESUMABLE_STREAMS_URI for x in extensions):
        extensions.append(RESUMABLE_STREAMS)
    if signed_push is not None and out.capabilities.push_notifications:
        extensions.append(AgentExtension(
            uri=SIGNED_PUSH_URI,
            params=_struct({"jwksUrl": signed_push.jwks_url, "header": signed_push.header}),
            description="Push notifications carry a JWT (ES256/RS256) in the "
                        f"{signed_push.header} header: iss, aud = the webhook URL, iat, "
                        "exp, jti, taskId and body_sha256; keys at jwksUrl."))
    return out


def extended_view(public: AgentCard, own: AgentCard, denied: Collection[str]) -> AgentCard:
    """The extended card a caller gets: `own` (the agent's), with the public
    card's interfaces and security where it names none, without `denied` skills."""
    out = AgentCard()
    out.CopyFrom(own)
    if not out.supported_interfaces:
        out.supported_interfaces.extend(public.supported_interfaces)
    if not out.security_schemes:
        for name, scheme in public.security_schemes.items():
            out.security_schemes[name].CopyFrom(scheme)
        out.security_requirements.extend(public.security_requirements)
    if denied:
        kept = [s for s in out.skills if s.id not in denied]
        del out.skills[:]
        out.skills.extend(kept)
    return out


def advertised_host(bind_host: str) -> str:
    """What a card names for a server bound to `bind_host`: the host itself, or
    for a wildcard address this machine's name (never 0.0.0.0 or ::)."""
    if bind_host.strip() not in WILDCARDS:
        return bind_host
    return socket.getfqdn() or socket.gethostname() or "localhost"


def host_port(host: str, port: int) -> str:
    """`host:port`, with an IPv6 address in brackets."""
    return f"[{host}]:{port}" if ":" in host and not host.startswith("[") else f"{host}:{port}"


def grpc_address(value: str) -> str:
    """Check a --grpc-public-address: `host:port`, or with a scheme (grpc://,
    grpcs://, http://, https://) for clients that want one. Returned as given."""
    parts = urlsplit(value if "://" in value else f"grpc://{value}")
    try:
        port = parts.port
    except ValueError:
        port = None
    if parts.scheme not in ("grpc", "grpcs", "http", "https") or not parts.hostname or not port:
        raise ValueError(f"a gRPC address is host:port (e.g. agent.example.com:443), "
                         f"got {value!r}")
    if parts.hostname in WILDCARDS:
        raise ValueError(f"{value!r} is a wildcard address; name the host clients reach")
    return value


def _struct(values: dict[str, Any]) -> Struct:
    out = Struct()
    out.update(values)
    return out
