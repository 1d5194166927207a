"""An agent's server, whatever face it shows: the store, the bus, the
handler and its layers, leases, the push sender, metrics, readiness and
(unless left out) the gRPC server, opened in order and closed in reverse on
an AsyncExitStack. `serve` (serve.py) puts the aiohttp face in front of
it; the ASGI app (mounted.py) its ASGI face."""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import TYPE_CHECKING

from prometheus_client import Info

from a2a_grpc.agent import AgentExecutor
from a2a_grpc.app import keys as signing_keys
from a2a_grpc.app import process
from a2a_grpc.app.admission import Admission
from a2a_grpc.app.chain import chain
from a2a_grpc.app.hangup import on_hangup
from a2a_grpc.app.health import Readiness
from a2a_grpc.app.leases import Leases
from a2a_grpc.app.limits import LimitOptions
from a2a_grpc.app.options import (
    ObserveOptions,
    admission_options,
    auth_options,
    limit_options,
    observe_options,
    preview_options,
    push_options,
)
from a2a_grpc.app.settings import ServeSettings
from a2a_grpc.app.tls import TlsFiles
from a2a_grpc.auth import Gate
from a2a_grpc.auth.config import configure, reloader
from a2a_grpc.bridge.endpoints import JWKS_PATH
from a2a_grpc.bus import Backlog, EventBus, open_bus
from a2a_grpc.bus.hub_client import HubEventBus
from a2a_grpc.cards.card import (
    Interface,
    SignedPush,
    advertised_host,
    card_for,
    host_port,
    public_card,
)
from a2a_grpc.cards.serving import ServedCard
from a2a_grpc.core import media
from a2a_grpc.core.contract import A2AService
from a2a_grpc.execution.hosted import Hosted
from a2a_grpc.generated.a2a_pb2 import AgentCard
from a2a_grpc.grpc_edge.asgi import CarriedGrpc, carried_grpc
from a2a_grpc.grpc_edge.server import GrpcServer, start_grpc
from a2a_grpc.handler.request_handler import RequestHandler
from a2a_grpc.observe.metrics import Metrics
from a2a_grpc.push.digest import HEADER as SIGNATURE_HEADER
from a2a_grpc.push.sender import PushSender
from a2a_grpc.stores import TaskStore, open_store

if TYPE_CHECKING:
    from a2a_grpc.push.signing import Signer

log = logging.getLogger("a2a_grpc")


@dataclass(slots=True)
class Assembly:
    card: AgentCard  # the agent's, as written: the public card is made from it
    handler: RequestHandler
    admission: Admission  # the outermost layer: what every face serves
    metrics: Metrics
    readiness: Readiness
    store: TaskStore
    bus: EventBus
    keys: signing_keys.Keys
    signer: Signer | None  # signs push notifications; its issuer is the public URL
    observe: ObserveOptions
    grpc: GrpcServer | CarriedGrpc | None  # carried: answered on the HTTP port
    # The hosted agents' cards as written, by name (a server hosting several), else empty.
    hosted: dict[str, AgentCard] = dataclasses.field(default_factory=dict)

    def grpc_interface(self, settings: ServeSettings, tenant: str = "",
                       here: str = "") -> list[Interface]:
        """`here`: the host and port the HTTP side was reached at, which a
        carried gRPC shares (unless its carrier names a port of its own)."""
        net = settings.network
        if self.grpc is None:
            return []
        if net.grpc_public_address:
            return [Interface("GRPC", net.grpc_public_address, tenant)]
        if here and isinstance(self.grpc, CarriedGrpc) and not self.grpc.port:
            return [Interface("GRPC", here, tenant)]  # the port the card was asked on
        return [Interface("GRPC", host_port(advertised_host(net.host), self.grpc.port), tenant)]

    async def publish(self, interfaces: list[Interface], served: ServedCard,
                      name: str = "", base: str | None = None) -> AgentCard:
        """The public card naming `interfaces`, signed if keys are set, served
        from now on. `base`: where the signing keys are (by default the
        HTTP+JSON interface's URL); `name`: a hosted agent's (its card as
        written, and the handler's card for its calls)."""
        if base is None:
            base = next((i.url for i in interfaces if i.binding == "HTTP+JSON"), "")
        own = self.hosted[name] if name else self.card
        signed = None
        if self.signer is not None and base:
            self.signer.issuer = base
            signed = SignedPush(base + JWKS_PATH, SIGNATURE_HEADER)
        card = self.keys.sign_card(public_card(own, interfaces, signed,
                                               versions=self.handler.versions),
                                   base + JWKS_PATH)
        if name:
            self.handler.cards[name] = card
            if next(iter(self.hosted)) == name:
                self.handler.card = card
        else:
            self.handler.card = card
        served.update(card)
        served.since(await self.store.card_published(f"public/{name}" if name else "public",
                                                     served.digest, time.time_ns()))
        return card


def warn_unknown_modes(card: AgentCard) -> None:
    """Say once, at start, which of the card's modes accept nothing: a user
    porting a card sees why its parts are refused before a client does."""
    unknown = media.unknown_modes(card)
    if unknown:
        log.warning("the agent card's modes %s are neither media types (type/subtype) nor "
                    "words this server reads (%s): parts are never accepted by them",
                    ", ".join(repr(m) for m in unknown), ", ".join(sorted(media.WORDS)))


async def _retention(handler: RequestHandler, max_age_s: float) -> None:
    """Purge final tasks older than `max_age_s`, checking every max_age/10 (<= 60 s)."""
    while True:
        await asyncio.sleep(min(max_age_s / 10, 60.0))
        try:
            gone = await handler.purge(max_age_s)
        except Exception:
            log.exception("purging old tasks failed; will retry")
            continue
        if gone:
            log.info("purged %d final tasks older than %.0f s", gone, max_age_s)


async def assemble(agent: AgentExecutor, settings: ServeSettings, cleanup: AsyncExitStack,
                   tls: TlsFiles | None, *, grpc: bool | str = True,
                   grpc_shared: bool | None = None,
                   grpc_gate: Callable[[A2AService], A2AService] | None = None) -> Assembly:
    """Open everything `agent` is served with; `cleanup` closes it. `grpc`:
    True serves it with grpc.aio on its own port, "carried" makes it an ASGI
    app for the server that carries the HTTP side (grpc_edge/asgi).
    `grpc_shared`: the gRPC port is shared with this server's other processes
    (by default: under `serve --workers`); `grpc_gate`: what a host app puts
    in front of every gRPC call (a mounted app's authentication: auth/host.py)."""
    net, stored = settings.network, settings.store
    push = push_options(settings.push)
    limits, observe = limit_options(settings.limits), observe_options(settings.observability)
    admitting = admission_options(settings.limits)
    if stored.stream_backlog < 1:
        raise ValueError("--stream-backlog must be >= 1")
    hosted = ({name: card_for(a) for name, a in agent.agents.items()}
              if isinstance(agent, Hosted) else {})
    card = next(iter(hosted.values())) if hosted else card_for(agent)
    for each in hosted.values() or (card,):
        warn_unknown_modes(each)
    if stored.url == "memory" and getattr(agent, "keeps_conversations", False):
        log.warning("--store memory: the agent's conversations (%s) are kept in memory and "
                    "lost when the server restarts; the SQLite default or PostgreSQL keeps "
                    "them", type(agent).__name__)
    auth = auth_options(settings.security, net)
    # Before the store opens: a bad file stops it here. One security configuration for
    # every agent hosted, declared on each one's card, checked by each one's gate.
    verifiers = configure(card, auth)
    configured = {name: verifiers if each is card else configure(each, auth)
                  for name, each in hosted.items()}
    gates = {name: Gate(each, configured[name]) for name, each in hosted.items()}
    keys = signing_keys.load(push.keys_dir, settings.security.card_keys)
    signer = keys.signer()
    worker = process.worker()  # under `serve --workers`, it writes a shard of its own
    store = await open_store(stored.url, shard=None if worker is None else worker - 1)
    cleanup.push_async_callback(store.close)
    bus = await open_bus(stored.bus, Backlog(events=stored.stream_backlog))
    cleanup.push_async_callback(bus.close)
    if not isinstance(bus, HubEventBus):  # a hub's workers: their supervisor counts them
        await store.register_server(alone=not stored.bus)  # before it recovers a task
    handler = RequestHandler(agent, card, store=store, bus=bus, push_policy=push.policy,
                             interrupted_only=settings.agent.follow_ups == "interrupted",
                             replicated=bool(stored.bus), push_secrets=push.secrets,
                             preview=preview_options(settings.preview))
    cleanup.push_async_callback(handler.close)
    metrics = Metrics()
    if process.worker() is not None:  # which of `serve --workers`' processes answered
        Info("a2a_worker", "this worker of serve --workers", registry=metrics.registry).info(
            {"worker": str(process.worker()), "pid": str(process.worker_pid())})
    admission = chain(handler, gates.get(next(iter(hosted), ""), Gate(card, verifiers)),
                      limits, admitting, metrics.registry, gates,
                      _shared_rate(stored.bus, bus, limits, cleanup))
    for checking in [verifiers, *(v for v in configured.values() if v is not verifiers)]:
        cleanup.callback(on_hangup(reloader(auth, checking)))
    readiness = Readiness(store, bus if stored.bus else None)
    leases = Leases(handler, store, stored.lease,
                    lambda: readiness.draining) if stored.bus else None
    recovered = await handler.recover() if leases is None else await leases.recover()
    if leases is not None:
        renewing = asyncio.create_task(leases.run(), name="a2a-leases")
        cleanup.callback(renewing.cancel)
        bus.answer(handler.on_control)  # CancelTask from other replicas
        if isinstance(bus, HubEventBus):  # workers: a worker gone is known at once
            bus.holds_as(leases.holder, leases.take_over)
        cleanup.callback(leases.stop)  # before the store closes
    elif recovered:
        log.warning("%d task(s) were still running when the server last stopped: %s",
                    recovered, "resumed" if agent.resumable else "marked FAILED")
    if any(c.capabilities.push_notifications for c in hosted.values() or (card,)):
        config = push.sender if leases is None else dataclasses.replace(
            push.sender, claim=push.sender.timeout + 5)  # replicas share the outbox
        sender = PushSender(store, push.policy, signer, config, metrics, push.secrets)
        await sender.start()
        cleanup.push_async_callback(sender.stop)
        handler.attach_sender(sender.wake)
    handler.observe(metrics)
    grpc_server: GrpcServer | CarriedGrpc | None = None
    gated = admission if grpc_gate is None else grpc_gate(admission)
    if grpc == "carried":
        grpc_server = await carried_grpc(handler, gated, metrics)
        cleanup.push_async_callback(grpc_server.stop, net.grace)
    elif grpc:
        shared = worker is not None if grpc_shared is None else grpc_shared
        grpc_server = await start_grpc(
            handler, net.host, net.grpc_port,
            gated,
            tls, metrics, shared=shared)
        cleanup.push_async_callback(grpc_server.stop, net.grace)
    if grpc_server is not None:
        watching = asyncio.create_task(readiness.watch(grpc_server.serving), name="a2a-ready")
        cleanup.callback(watching.cancel)
    if stored.retention:
        purger = asyncio.create_task(_retention(handler, stored.retention))
        cleanup.callback(purger.cancel)
    return Assembly(card, handler, admission, metrics, readiness, store, bus, keys, signer,
                    observe, grpc_server, hosted)


def _shared_rate(url: str | None, bus: EventBus, limits: LimitOptions,
                 cleanup: AsyncExitStack) -> Callable[[str], Awaitable[float | None]] | None:
    """The rate limit counted across replicas (in Redis) or workers (in their
    hub), when there are several and a rate is set."""
    if not url or not limits.rate:
        return None
    if isinstance(bus, HubEventBus):
        return functools.partial(bus.take, rate=limits.rate, burst=limits.bucket)
    from a2a_grpc.bus.redis_limits import SharedRate

    shared = SharedRate(url, limits.rate, limits.bucket)
    cleanup.push_async_callback(shared.close)
    return shared.take
