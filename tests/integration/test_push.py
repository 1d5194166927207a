"""Push notifications that arrive: a real webhook on loopback (allowed explicitly)."""

from __future__ import annotations

import asyncio
import itertools
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass

import grpc
import pytest
from aiohttp import web

from a2a_grpc.cards.card import card_for
from a2a_grpc.core.call import CallContext
from a2a_grpc.core.errors import InvalidParamsError
from a2a_grpc.demos.demo import DemoAgent
from a2a_grpc.generated import a2a_pb2 as pb
from a2a_grpc.handler.request_handler import RequestHandler
from a2a_grpc.push.policy import PushPolicy
from a2a_grpc.push.receiver import PushReceiver, PushVerificationError
from a2a_grpc.push.sender import PushSender, SenderConfig
from a2a_grpc.push.signing import HEADER, Signer, SigningKey
from a2a_grpc.stores import MemoryTaskStore
from tests.conftest import Serve, user_message
from tests.grpc_errors import fails
from tests.webhook import Webhook, start_webhook

LOOPBACK = PushPolicy.from_flags(["127.0.0.1/32"], allow_http=True)
FAST = SenderConfig(base_delay=0.05, max_attempts=4, idle_poll=0.05, timeout=2)
CTX = CallContext()


@dataclass
class Rig:
    handler: RequestHandler
    store: MemoryTaskStore
    sender: PushSender
    hook: Webhook

    async def send(self, text: str, *hooks: pb.TaskPushNotificationConfig,
                   wait: bool = True) -> pb.Task:
        config = pb.SendMessageConfiguration(return_immediately=not wait)
        if hooks:
            config.task_push_notification_config.CopyFrom(hooks[0])
        resp = await self.handler.send_message(
            pb.SendMessageRequest(message=user_message(text), configuration=config), CTX)
        for extra in hooks[1:]:
            extra.task_id = resp.task.id
            await self.handler.create_task_push_notification_config(extra, CTX)
        return resp.task


async def make_rig(sender_policy: PushPolicy = LOOPBACK, signer: Signer | None = None,
                   config: SenderConfig = FAST) -> Rig:
    agent = DemoAgent()
    store = MemoryTaskStore()
    handler = RequestHandler(agent, card_for(agent), store=store, push_policy=LOOPBACK)
    sender = PushSender(store, sender_policy, signer, config)
    await sender.start()
    handler.attach_sender(sender.wake)
    return Rig(handler, store, sender, await start_webhook())


@pytest.fixture
async def rig() -> AsyncIterator[Rig]:
    r = await make_rig()
    yield r
    await r.sender.stop()
    await r.hook.server.close()
    await r.handler.close()


def hook(rig: Rig, path: str, **kw: object) -> pb.TaskPushNotificationConfig:
    return pb.TaskPushNotificationConfig(url=rig.hook.url(path), **kw)  # type: ignore[arg-type]


async def test_every_event_arrives_in_order_with_the_right_headers(rig: Rig) -> None:
    task = await rig.send("stream 3", hook(rig, "/a", token="tok", authentication=(
        pb.AuthenticationInfo(scheme="Bearer", credentials="s3cret"))))
    hits = await rig.hook.wait_for("/a", 5)
    kinds = [h.event.WhichOneof("payload") for h in hits]
    assert kinds == ["status_update", "artifact_update", "artifact_update", "artifact_update",
                     "status_update"]
    assert hits[-1].event.status_update.status.state == pb.TASK_STATE_COMPLETED
    assert [h.event.artifact_update.artifact.parts[0].text for h in hits[1:4]] == [
        "chunk 1/3", "chunk 2/3", "chunk 3/3"]
    first = hits[0].headers
    assert first["Content-Type"] == "application/a2a+json"
    assert first["Authorization"] == "Bearer s3cret"
    assert first["X-A2A-Notification-Token"] == "tok"
    keys = [h.headers["Idempotency-Key"] for h in hits]
    assert keys == [f"{task.id}:{seq}" for seq in range(2, 7)]
    for _ in range(100):  # the webhook saw it; the sender counts once it has the answer
        if rig.sender.stats["delivered"] == 5:
            break
        await asyncio.sleep(0.01)
    assert rig.sender.stats["delivered"] == 5


async def test_each_config_gets_every_event(rig: Rig) -> None:
    await rig.send("slow 0.3", hook(rig, "/one"), hook(rig, "/two"), wait=False)
    two = await rig.hook.wait_for("/two", 3)  # registered while the task was working
    one = await rig.hook.wait_for("/one", 4)
    assert two[-1].event.status_update.status.state == pb.TASK_STATE_COMPLETED
    assert [h.body for h in one[-3:]] == [h.body for h in two]


async def test_5xx_is_retried_with_backoff_then_delivered_once(rig: Rig) -> None:
    rig.hook.answer("/flaky", 500, 500, 500)
    await rig.send("reply-less", hook(rig, "/flaky"))
    hits = await rig.hook.wait_for("/flaky", 5)
    first_event = [h for h in hits if h.headers["Idempotency-Key"] == hits[0].headers[
        "Idempotency-Key"]]
    assert len(first_event) == 4  # 3 failures, then delivered, once
    gaps = [b.at - a.at for a, b in itertools.pairwise(first_event)]
    assert all(g >= 0.02 for g in gaps)  # backoff, with jitter, not a hot loop
    await asyncio.sleep(0.3)
    assert len([h for h in rig.hook.at("/flaky") if h.headers["Idempotency-Key"] ==
                hits[0].headers["Idempotency-Key"]]) == 4


async def test_429_retry_after_is_honoured(rig: Rig) -> None:
    rig.hook.answer("/busy", 429, retry_after="1")
    await rig.send("x", hook(rig, "/busy"))
    first, second = (await rig.hook.wait_for("/busy", 2))[:2]
    assert second.headers["Idempotency-Key"] == first.headers["Idempotency-Key"]
    assert second.at - first.at >= 0.9


async def test_4xx_is_not_retried_but_dead_lettered(rig: Rig) -> None:
    rig.hook.answer("/gone", 400)
    await rig.send("x", hook(rig, "/gone"))
    hits = await rig.hook.wait_for("/gone", 2)  # the next event still goes out
    assert hits[0].headers["Idempotency-Key"] != hits[1].headers["Idempotency-Key"]
    dead = await rig.store.dead_letters()
    assert [(d.attempts, d.last_error) for d in dead] == [(1, "HTTP 400")]


async def test_dead_letter_after_too_many_failures(rig: Rig) -> None:
    rig.hook.answer("/down", *([503] * 10))
    await rig.send("x", hook(rig, "/down"))
    await rig.hook.wait_for("/down", 4)
    for _ in range(100):
        dead = await rig.store.dead_letters()
        if dead:
            break
        await asyncio.sleep(0.02)
    assert dead[0].attempts == 4 and "HTTP 503, after 4 attempts" == dead[0].last_error
    assert rig.sender.stats["dead"] >= 1


async def test_deleting_a_config_stops_its_deliveries(rig: Rig) -> None:
    rig.hook.answer("/stop", *([500] * 50))
    task = await rig.send("x", hook(rig, "/stop", id="cfg"))
    await rig.hook.wait_for("/stop", 1)
    await rig.handler.delete_task_push_notification_config(
        pb.DeleteTaskPushNotificationConfigRequest(task_id=task.id, id="cfg"), CTX)
    seen = len(rig.hook.at("/stop"))
    await asyncio.sleep(0.5)
    assert len(rig.hook.at("/stop")) <= seen + 1  # at most the attempt already in flight
    assert await rig.store.due_deliveries(2**62, 10) == []


async def test_addresses_are_checked_again_at_delivery() -> None:
    r = await make_rig(sender_policy=PushPolicy.from_flags([], allow_http=True))
    try:
        await r.send("x", hook(r, "/never"))  # the handler allowed it; the sender does not
        for _ in range(100):
            dead = await r.store.dead_letters()
            if dead:
                break
            await asyncio.sleep(0.02)
        assert "loopback" in dead[0].last_error and not r.hook.hits
    finally:
        await r.sender.stop()
        await r.hook.server.close()
        await r.handler.close()


@pytest.mark.parametrize("url", [
    "https://127.0.0.1/hook", "https://localhost/hook", "https://169.254.169.254/latest",
    "https://10.0.0.5/h", "https://192.168.1.1/h", "https://[::1]/h", "https://[fe80::1]/h",
    "https://[fd00::1]/h", "https://[::ffff:127.0.0.1]/h", "https://0.0.0.0/h",
    "https://224.0.0.1/h", "http://8.8.8.8/h", "ftp://8.8.8.8/h", "file:///etc/passwd",
])
async def test_forbidden_webhook_urls(serve: Serve, url: str) -> None:
    s = await serve()
    task = (await s.stub.SendMessage(pb.SendMessageRequest(message=user_message("x")))).task
    seen = await fails(s.stub.CreateTaskPushNotificationConfig(
        pb.TaskPushNotificationConfig(task_id=task.id, url=url)))
    assert (seen.code, seen.reason, seen.fields) == (
        grpc.StatusCode.INVALID_ARGUMENT, "INVALID_PARAMS", ["url"])
    seen = await fails(s.stub.SendMessage(pb.SendMessageRequest(
        message=user_message("y"), configuration=pb.SendMessageConfiguration(
            task_push_notification_config=pb.TaskPushNotificationConfig(url=url)))))
    assert seen.fields == ["configuration.taskPushNotificationConfig.url"]


def test_allowlists() -> None:
    policy = PushPolicy.from_flags(["10.1.0.0/16", "hooks.internal", ".corp.example"])
    import ipaddress

    assert policy.refusal("a", ipaddress.ip_address("10.1.2.3")) is None
    assert policy.refusal("a", ipaddress.ip_address("10.2.0.1")) is not None
    assert policy.host_allowed("hooks.internal") and policy.host_allowed("x.corp.example")
    assert not policy.host_allowed("evilcorp.example")


# -- signed notifications --


def new_key() -> SigningKey:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    pem = ec.generate_private_key(ec.SECP256R1()).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption())
    return SigningKey.from_pem(pem)


async def test_signed_notifications_verify_and_tampering_fails() -> None:
    key = new_key()
    signer = Signer([key], issuer="http://agent.example")
    r = await make_rig(signer=signer)
    try:
        url = r.hook.url("/signed")
        await r.send("x", pb.TaskPushNotificationConfig(
            url=url, token="tok", authentication=pb.AuthenticationInfo(scheme="Bearer")))
        hits = await r.hook.wait_for("/signed", 2)
        receiver = PushReceiver(audience=url, jwks=signer.jwks(), token="tok",
                                issuer="http://agent.example")
        event = await receiver.verify(hits[0].headers, hits[0].body)
        assert event.HasField("status_update")
        assert hits[0].headers["Authorization"] == f"Bearer {hits[0].headers[HEADER]}"
        with pytest.raises(PushVerificationError, match="replayed"):
            await receiver.verify(hits[0].headers, hits[0].body)
        with pytest.raises(PushVerificationError, match="does not match"):
            await receiver.verify(hits[1].headers, hits[1].body.replace(b"}", b" }", 1))
        with pytest.raises(PushVerificationError, match="token"):
            await receiver.verify({**hits[1].headers, "X-A2A-Notification-Token": "x"},
                                  hits[1].body)
        other = PushReceiver(audience="http://someone.else/hook", jwks=signer.jwks())
        with pytest.raises(PushVerificationError, match=r"(?i)audience"):
            await other.verify(hits[1].headers, hits[1].body)
    finally:
        await r.sender.stop()
        await r.hook.server.close()
        await r.handler.close()


async def test_expired_forged_and_rotated_keys() -> None:
    old, new = new_key(), new_key()
    body = b'{"statusUpdate":{"taskId":"t"}}'
    receiver = PushReceiver(audience="https://me/hook",
                            jwks=Signer([new, old], "i").jwks())
    in_flight = Signer([old], "i").sign("https://me/hook", "t", body)  # before rotation
    await receiver.verify({HEADER: in_flight}, body)  # still verifies after rotation
    fresh = Signer([new, old], "i").sign("https://me/hook", "t", body)
    await receiver.verify({HEADER: fresh}, body)
    expired = Signer([new], "i", ttl_s=-120).sign("https://me/hook", "t", body)
    with pytest.raises(PushVerificationError, match="expired"):
        await receiver.verify({HEADER: expired}, body)
    stranger = Signer([new_key()], "i").sign("https://me/hook", "t", body)
    with pytest.raises(PushVerificationError, match="unknown signing key"):
        await receiver.verify({HEADER: stranger}, body)
    with pytest.raises(PushVerificationError, match="no signature"):
        await receiver.verify({}, body)


@pytest.mark.parametrize("url", [
    "https://127.0.0.1/x", "https://[::1]/x", "https://10.1.2.3/x", "https://169.254.169.254/x",
    "https://[fe80::1]/x", "https://[::ffff:192.168.0.1]/x", "https://localhost/x",
    "https://a.localhost/x", "http://203.0.113.9/x", "ftp://example.com/x", "/relative"])
def test_creation_refuses_bad_schemes_and_literal_private_addresses(url: str) -> None:
    with pytest.raises(InvalidParamsError):
        PushPolicy().check_at_creation(url)


@pytest.mark.parametrize("url", ["https://example.com/hook",
                                 "https://no-such-host.invalid/hook", "https://8.8.8.8/x"])
def test_creation_asks_no_dns(url: str) -> None:
    PushPolicy().check_at_creation(url)  # names are checked at delivery, where it counts


async def test_the_readme_receiver_example_verifies_real_notifications() -> None:
    from aiohttp.test_utils import TestServer

    from examples.webhook_receiver import make_app

    key = new_key()
    signer = Signer([key], issuer="http://agent.example")
    r = await make_rig(signer=signer)
    agent_app = web.Application()

    async def jwks(_: web.Request) -> web.Response:
        return web.json_response(signer.jwks())

    agent_app.router.add_get("/.well-known/jwks.json", jwks)
    agent_http = TestServer(agent_app, host="127.0.0.1")
    await agent_http.start_server()
    sock = socket.socket()  # bound first: the receiver must know its own URL (the audience)
    sock.bind(("127.0.0.1", 0))
    hook_url = f"http://127.0.0.1:{sock.getsockname()[1]}/a2a-hook"
    receiver = web.AppRunner(make_app(str(agent_http.make_url("")), hook_url, "s3cret"))
    await receiver.setup()
    await web.SockSite(receiver, sock).start()
    signer.issuer = str(agent_http.make_url("")).rstrip("/")
    try:
        await r.send("x", pb.TaskPushNotificationConfig(url=hook_url, token="s3cret"))
        for _ in range(200):
            if r.sender.stats["delivered"] >= 2:
                break
            await asyncio.sleep(0.02)
        assert r.sender.stats["delivered"] >= 2 and r.sender.stats["dead"] == 0
    finally:
        await receiver.cleanup()
        await agent_http.close()
        await r.sender.stop()
        await r.hook.server.close()
        await r.handler.close()
