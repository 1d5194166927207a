"""The chain of layers every edge calls (core/layer.py), composed here alone.

Outermost first: admission (the process's bound, and the drain), then
authentication, then the per-caller limits (which need to know who calls),
then the handler. A layer that is not configured is not in the chain: no
limits, no LimitedService; a card that asks for no credentials, no
AuthenticatedService. Admission is always there: it is how the server
drains. Each edge puts its own observation layer in front
(observe/observed.py), per binding.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry

from a2a_grpc.app.admission import Admission, AdmissionOptions
from a2a_grpc.app.limits import LimitedService, LimitOptions
from a2a_grpc.auth import AuthenticatedService, Gate
from a2a_grpc.core.contract import A2AService
from a2a_grpc.handler.request_handler import RequestHandler


def chain(handler: RequestHandler, gate: Gate, limits: LimitOptions,
          admitting: AdmissionOptions, registry: CollectorRegistry) -> Admission:
    """The service the edges serve, in front of `handler`."""
    service: A2AService = handler
    if limits.any:
        service = LimitedService(service, limits, handler.running, registry)
    if not gate.open:
        service = AuthenticatedService(service, gate)
    return Admission(service, admitting, registry)
