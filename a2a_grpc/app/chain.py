"""The chain of layers every edge calls (core/layer.py), composed here alone.

Outermost first: admission (the process's bound, and the drain), then, on a
server hosting several agents, which agent a call is for (tenancy.py), then
authentication (by that agent's card), then the per-caller limits (which
need to know who calls), then the handler. A layer that is not configured
is not in the chain: no limits, no LimitedService; a card that asks for no
credentials, no AuthenticatedService. Admission is always there: it is how
the server drains. Each edge puts its own observation layer in front
(observe/observed.py), per binding.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping

from prometheus_client import CollectorRegistry

from a2a_grpc.app.admission import Admission, AdmissionOptions
from a2a_grpc.app.limits import LimitedService, LimitOptions
from a2a_grpc.app.tenancy import Tenancy
from a2a_grpc.auth import AuthenticatedService, Gate
from a2a_grpc.core.contract import A2AService
from a2a_grpc.handler.request_handler import RequestHandler


def chain(handler: RequestHandler, gate: Gate, limits: LimitOptions,
          admitting: AdmissionOptions, registry: CollectorRegistry,
          gates: Mapping[str, Gate] | None = None,
          shared_rate: Callable[[str], Awaitable[float | None]] | None = None) -> Admission:
    """The service the edges serve, in front of `handler`. `gates`: a hosted
    agent's by its name (a server hosting several); `shared_rate`: the rate
    limit counted across replicas (app/limits.py)."""
    service: A2AService = handler
    if limits.any:
        service = LimitedService(service, limits, handler.running, registry, shared_rate)
    if not gate.open or any(not g.open for g in (gates or {}).values()):
        service = AuthenticatedService(service, gate, gates)
    if gates:
        service = Tenancy(service, frozenset(gates), registry)
    return Admission(service, admitting, registry)
