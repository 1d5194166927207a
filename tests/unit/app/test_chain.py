"""The chain the edges serve holds only the layers that are configured
(app/chain.py), and every layer forwards every operation (core/layer.py)."""

from __future__ import annotations

import inspect

from prometheus_client import CollectorRegistry

from a2a_grpc.app.admission import Admission, AdmissionOptions
from a2a_grpc.app.chain import chain
from a2a_grpc.app.limits import LimitedService, LimitOptions
from a2a_grpc.auth import AuthenticatedService, Gate
from a2a_grpc.cards.card import card_for
from a2a_grpc.core.contract import A2AService, python_name
from a2a_grpc.core.layer import Layer, Operations, layers
from a2a_grpc.core.methods import METHODS
from a2a_grpc.demos.demo import DemoAgent
from a2a_grpc.generated import a2a_pb2 as pb
from a2a_grpc.handler.request_handler import RequestHandler


def handler_and_card() -> tuple[RequestHandler, pb.AgentCard]:
    agent = DemoAgent()
    card = card_for(agent)
    return RequestHandler(agent, card), card


def test_only_configured_layers_are_in_the_chain() -> None:
    handler, card = handler_and_card()
    open_gate = Gate(card, {})
    assert open_gate.open
    bare = chain(handler, open_gate, LimitOptions(), AdmissionOptions(), CollectorRegistry())
    assert layers(bare) == [Admission, RequestHandler]

    secured = pb.AgentCard()
    secured.CopyFrom(card)
    secured.security_schemes["key"].api_key_security_scheme.name = "X-API-Key"
    secured.security_requirements.add().schemes["key"].SetInParent()
    from a2a_grpc.auth.apikey import ApiKeyVerifier

    gate = Gate(secured, {"key": ApiKeyVerifier("key", "header", "X-API-Key",
                                                {"k1": "alice"})})
    assert not gate.open
    full = chain(handler, gate, LimitOptions(rate=5), AdmissionOptions(), CollectorRegistry())
    assert layers(full) == [Admission, AuthenticatedService, LimitedService, RequestHandler]
    limited = chain(handler, open_gate, LimitOptions(streams=2), AdmissionOptions(),
                    CollectorRegistry())
    assert layers(limited) == [Admission, LimitedService, RequestHandler]


def test_the_operations_are_written_once_for_every_rpc() -> None:
    """Every RPC of the service is an operation of the base, and none of the
    layers restates one: each overrides the hooks alone (or, for a call it
    treats apart, that call)."""
    protocol = {name for name, _ in inspect.getmembers(A2AService, inspect.isfunction)
                if not name.startswith("_")}
    assert protocol == {python_name(rpc) for rpc in METHODS}
    for name in protocol:
        assert name in vars(Operations), name
    for layer in (Admission, AuthenticatedService, LimitedService):
        assert issubclass(layer, Layer)
        assert not protocol & set(vars(layer)), (layer, protocol & set(vars(layer)))
