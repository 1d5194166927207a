"""Delivering push notifications: at least once, in order per config, durable.

Deliveries wait in the store's outbox (queued in the same transaction as the
event). This worker takes the oldest pending delivery of each config when it
is due, POSTs the event (ProtoJSON `StreamResponse`) to the config's URL, and
then deletes it (2xx), reschedules it (network error, timeout, 5xx, 429:
exponential backoff with jitter, or the receiver's Retry-After), or
dead-letters it (other statuses, a refused address, or too many attempts).
A restart picks up whatever is still pending. A config's next notification
waits until the one before it is delivered or dead.

A config set by an A2A 0.3 or first-draft client gets what that dialect's
servers send: the task, in its JSON shape (`kind`, lower-case states), as it
stands when the notification goes out (its state then, not at the event),
with `Content-Type: application/json`.

Headers: `Content-Type: application/a2a+json`; `Authorization: <scheme>
<credentials>` from the config; `X-A2A-Notification-Token` (the config's
token); `Idempotency-Key: <taskId>:<seq>` so a receiver can drop duplicates;
and, when signing is on, the JWT (see signing.py) in
`A2A-Notification-Signature` (also as the Bearer token when the config's
authentication is scheme "Bearer" with no credentials of its own).
"""

from __future__ import annotations

import asyncio
import email.utils
import ipaddress
import json
import logging
import random
import time
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import aiohttp
from google.protobuf import json_format

from a2a_grpc.core.call import PREVIEW_VERSION
from a2a_grpc.core.errors import A2AError
from a2a_grpc.core.generation import as_1_0
from a2a_grpc.generated.a2a_pb2 import TaskPushNotificationConfig
from a2a_grpc.legacy import json01, json03
from a2a_grpc.observe import tracing
from a2a_grpc.observe.metrics import Metrics
from a2a_grpc.push.digest import HEADER as SIGNATURE_HEADER
from a2a_grpc.push.policy import PushPolicy, PushTargetRefused
from a2a_grpc.push.secrets import SecretBox, SecretsError, open_secret

if TYPE_CHECKING:  # signing needs the [auth] extra; a sender without a signer does not
    from a2a_grpc.push.signing import Signer
from a2a_grpc.stores import Delivery, PushStore, TaskLog

log = logging.getLogger("a2a_grpc.push")
# The task's JSON shape per dialect, for configs set by older clients.
TASK_SHAPES = {"0.3": json03.task_out, "0.1": json01.task_out}
TOKEN_HEADER = "X-A2A-Notification-Token"


@dataclass(frozen=True, slots=True)
class SenderConfig:
    timeout: float = 10.0  # per attempt
    max_attempts: int = 8
    base_delay: float = 1.0  # first retry after ~this; doubles each time
    max_delay: float = 600.0
    batch: int = 64
    idle_poll: float = 1.0  # when nothing is due, look again at least this often
    # Replicas sharing the outbox: each delivery taken is claimed for this long (more
    # than an attempt takes), so exactly one replica sends it; None: one process.
    claim: float | None = None


class Outbox(PushStore, TaskLog, Protocol):
    """What the sender reads: the outbox, and the events it delivers."""


class PushSender:
    def __init__(self, store: Outbox, policy: PushPolicy, signer: Signer | None = None,
                 config: SenderConfig | None = None, metrics: Metrics | None = None,
                 secrets: SecretBox | None = None) -> None:
        self.store = store
        self.secrets = secrets  # opens sealed credentials (secrets.py)
        self.policy = policy
        self.signer = signer
        self.config = config or SenderConfig()
        self.stats: Counter[str] = Counter()  # delivered, retried, dead
        self._counts = None if metrics is None else {
            k: metrics.push.labels(k) for k in ("delivered", "retried", "dead")}
        self._wakeup = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._session: aiohttp.ClientSession | None = None
        self._stopping = False

    async def start(self) -> None:
        connector = aiohttp.TCPConnector(resolver=self.policy.resolver(), limit=64)
        self._session = aiohttp.ClientSession(
            connector=connector, timeout=aiohttp.ClientTimeout(total=self.config.timeout))
        self._task = asyncio.create_task(self._loop(), name="a2a-push-sender")

    async def stop(self) -> None:
        # The flag as well as the cancel: Python 3.11's wait_for could lose a
        # cancellation that came as its timeout fired, and the loop went on
        # forever (seen as a server that did not exit on SIGTERM).
        self._stopping = True
        self._wakeup.set()
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        if self._session is not None:
            await self._session.close()

    def _count(self, outcome: str) -> None:
        self.stats[outcome] += 1
        if self._counts is not None:
            self._counts[outcome].inc()

    def wake(self) -> None:
        """A delivery was queued: look now instead of at the next poll."""
        self._wakeup.set()

    async def _loop(self) -> None:
        while not self._stopping:
            try:
                now, claim = time.time_ns(), self.config.claim
                due = await self.store.due_deliveries(
                    now, self.config.batch, None if claim is None else now + int(claim * 1e9))
                if due:
                    await asyncio.gather(*(self._attempt(d) for d in due))
                    continue
                next_ns = await self.store.next_due()
            except A2AError:  # the store is unavailable: it was logged; try again soon
                next_ns = None
            wait = self.config.idle_poll
            if next_ns is not None:
                wait = min(wait, max(0.0, (next_ns - time.time_ns()) / 1e9))
            try:
                async with asyncio.timeout(wait):
                    await self._wakeup.wait()
            except TimeoutError:
                pass
            self._wakeup.clear()

    async def _attempt(self, d: Delivery) -> None:
        """One try at `d`, in a span continuing the trace of the task's agent run
        (tracing.remember) when this process still knows it."""
        attributes = {"a2a.task_id": d.task_id, "a2a.push.config_id": d.config_id,
                      "a2a.push.event": d.seq, "a2a.push.attempt": d.attempts + 1}
        with tracing.child("a2a.push.deliver", attributes, tracing.recalled(d.task_id),
                           tracing.SpanKind.CLIENT):
            await self._try(d)

    async def _try(self, d: Delivery) -> None:
        target = await self.store.get_push_target(d.scope, d.task_id, d.config_id)
        body = None if target is None else await self._body(d, target[1])
        if target is None or body is None:  # deleted or purged meanwhile: nothing to send
            await self.store.delivered(d.id)
            return
        config, payload = target
        try:
            refused = self._refusal(config.url)
            if refused:
                raise PushTargetRefused(refused)
            status, retry_after = await self._post(config, d, body, legacy=bool(payload))
        except PushTargetRefused as exc:
            await self._dead(d, d.attempts + 1, f"address refused: {exc}")
            return
        except SecretsError as exc:  # no retry opens them: say why, once
            await self._dead(d, d.attempts + 1, f"the config's credentials are {exc}")
            return
        except (aiohttp.ClientError, TimeoutError, OSError) as exc:
            await self._retry(d, f"{type(exc).__name__}: {exc}", None)
            return
        if 200 <= status < 300:
            await self.store.delivered(d.id)
            self._count("delivered")
        elif status == 429 or status >= 500:
            await self._retry(d, f"HTTP {status}", retry_after)
        else:
            hint = " (redirects are not followed)" if 300 <= status < 400 else ""
            await self._dead(d, d.attempts + 1, f"HTTP {status}{hint}")

    async def _body(self, d: Delivery, payload: str) -> bytes | None:
        """What the notification carries (None: its event or task is gone)."""
        shape = TASK_SHAPES.get(payload)
        if shape is not None:
            stored = await self.store.get(d.scope, d.task_id)
            data = None if stored is None else shape(json_format.MessageToDict(stored.task))
        else:
            events = await self.store.events(d.scope, d.task_id, d.seq - 1, d.seq)
            # The A2A 1.1 preview's generations only for a config a 1.1 call set.
            data = None if not events else json_format.MessageToDict(
                events[0][1] if payload == PREVIEW_VERSION else as_1_0(events[0][1]))
        return None if data is None else json.dumps(data, separators=(",", ":")).encode()

    def _refusal(self, url: str) -> str | None:
        """Delivery-time check for what the resolver doesn't see: scheme, IP literals."""
        try:
            host = self.policy.check_syntax(url)
        except A2AError as exc:
            return exc.message
        try:
            ip = ipaddress.ip_address(host.strip("[]"))
        except ValueError:
            return None  # a name: the guarded resolver checks each address
        return self.policy.refusal(host, ip)

    async def _post(self, config: TaskPushNotificationConfig, d: Delivery,
                    body: bytes, legacy: bool) -> tuple[int, float | None]:
        assert self._session is not None
        headers = {"Content-Type": "application/json" if legacy else "application/a2a+json",
                   "Idempotency-Key": f"{d.task_id}:{d.seq}"}
        auth = config.authentication
        if config.token:
            headers[TOKEN_HEADER] = config.token
        if auth.scheme and auth.credentials:
            secret = open_secret(self.secrets, auth.credentials)
            headers["Authorization"] = f"{auth.scheme} {secret}"
        if self.signer is not None:
            token = self.signer.sign(config.url, d.task_id, body)
            headers[SIGNATURE_HEADER] = token
            if auth.scheme.lower() == "bearer" and not auth.credentials:
                headers["Authorization"] = f"Bearer {token}"
        tracing.inject(headers)  # the delivery's span (see _attempt)
        async with self._session.post(config.url, data=body, headers=headers,
                                      allow_redirects=False) as resp:
            await resp.read()
            return resp.status, _retry_after(resp.headers.get("Retry-After"))

    async def _retry(self, d: Delivery, error: str, retry_after: float | None) -> None:
        attempts = d.attempts + 1
        if attempts >= self.config.max_attempts:
            await self._dead(d, attempts, f"{error}, after {attempts} attempts")
            return
        backoff = min(self.config.max_delay, self.config.base_delay * 2 ** (attempts - 1))
        delay = retry_after if retry_after is not None else backoff * random.uniform(0.5, 1.0)
        delay = min(delay, self.config.max_delay)
        await self.store.reschedule(d.id, attempts, time.time_ns() + int(delay * 1e9), error)
        self._count("retried")
        log.info("push to config %s of task %s failed (%s); retry %d in %.1f s",
                 d.config_id, d.task_id, error, attempts, delay)

    async def _dead(self, d: Delivery, attempts: int, error: str) -> None:
        await self.store.dead_letter(d.id, attempts, error)
        self._count("dead")
        log.warning("push notification dead-lettered: task %s, config %s, event %d: %s",
                    d.task_id, d.config_id, d.seq, error)


def _retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header (delta-seconds or HTTP-date)."""
    if not value:
        return None
    if value.strip().isdigit():
        return float(value.strip())
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())
