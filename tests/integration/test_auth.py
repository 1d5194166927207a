"""Authentication from the card's schemes, on every binding, over real sockets:
API keys (header, query, cookie) and Bearer JWTs checked against a JWKS served
by a local HTTP server, its keys made and rotated during the test."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from a2a_grpc.agent import RequestContext, TaskEvents
from a2a_grpc.auth import Gate
from a2a_grpc.auth.config import AuthOptions, configure
from a2a_grpc.bridge import CARD
from a2a_grpc.cards.card import Interface, card_for, public_card
from a2a_grpc.client import A2AClient, ClientOptions
from a2a_grpc.core.errors import UnauthenticatedError
from a2a_grpc.demos.demo import DemoAgent
from a2a_grpc.generated import a2a_pb2 as pb
from tests.bindings import CallFailed
from tests.conftest import Stack, StackFactory
from tests.fakes import ScriptedAgent
from tests.issuer import AUDIENCE, ISSUER, Issuer
from tests.issuer import issuer as issuer  # the fixture

BINDINGS = ["grpc", "jsonrpc", "rest"]


async def secured(stack: StackFactory, tmp_path: Path, issuer: Issuer, agent: Any = None,
                  key_in: str = "header", scopes: tuple[str, ...] = ("tasks",)) -> Stack:
    keys = tmp_path / "keys.txt"
    keys.write_text("# subject:key\nalice:alice-key\nbob:bob-key\n")
    agent = agent or DemoAgent()
    card = card_for(agent)
    card.capabilities.push_notifications = True
    verifiers = configure(card, AuthOptions(
        api_keys=keys, api_key_in=key_in, api_key_name="X-API-Key" if key_in == "header"
        else "api_key", jwt_jwks=issuer.jwks_url, jwt_issuer=ISSUER, jwt_audience=AUDIENCE,
        scopes=scopes))
    return await stack(agent, card=card, gate=Gate(card, verifiers))


def msg(text: str, task_id: str = "") -> pb.SendMessageRequest:
    return pb.SendMessageRequest(message=pb.Message(
        message_id=f"m-{text}-{time.monotonic_ns()}", role=pb.ROLE_USER, task_id=task_id,
        parts=[pb.Part(text=text)]))


# Every operation, with a request that would be fine if the caller were admitted.
OPERATIONS: list[tuple[str, Any, bool]] = [
    ("SendMessage", msg("hi"), False),
    ("SendStreamingMessage", msg("hi"), True),
    ("GetTask", pb.GetTaskRequest(id="t"), False),
    ("ListTasks", pb.ListTasksRequest(), False),
    ("CancelTask", pb.CancelTaskRequest(id="t"), False),
    ("SubscribeToTask", pb.SubscribeToTaskRequest(id="t"), True),
    ("CreateTaskPushNotificationConfig",
     pb.TaskPushNotificationConfig(task_id="t", url="https://hooks.example.com/x"), False),
    ("GetTaskPushNotificationConfig", pb.GetTaskPushNotificationConfigRequest(task_id="t", id="c"),
     False),
    ("ListTaskPushNotificationConfigs", pb.ListTaskPushNotificationConfigsRequest(task_id="t"),
     False),
    ("GetExtendedAgentCard", pb.GetExtendedAgentCardRequest(), False),
    ("DeleteTaskPushNotificationConfig",
     pb.DeleteTaskPushNotificationConfigRequest(task_id="t", id="c"), False),
]


async def refused(s: Stack, binding: str, rpc: str, req: Any, streaming: bool,
                  headers: dict[str, str] | None = None) -> CallFailed:
    b = s.binding(binding, headers)
    with pytest.raises(CallFailed) as info:
        await (b.stream(rpc, req) if streaming else b.call(rpc, req))
    if binding != "grpc" and info.value.reason == "UNAUTHENTICATED":
        challenge = b.last_headers["WWW-Authenticate"]
        assert "ApiKey" in challenge and "Bearer" in challenge
    return info.value


@pytest.mark.parametrize("binding", BINDINGS)
async def test_every_operation_is_refused_without_credentials(
        stack: StackFactory, tmp_path: Path, issuer: Issuer, binding: str) -> None:
    s = await secured(stack, tmp_path, issuer)
    assert len(OPERATIONS) == len(pb.DESCRIPTOR.services_by_name["A2AService"].methods)
    for rpc, req, streaming in OPERATIONS:
        seen = await refused(s, binding, rpc, req, streaming)
        assert seen.reason == "UNAUTHENTICATED", rpc
        assert "apiKey or bearer" in seen.message
    async with s.session.get(s.base_url + "/.well-known/agent-card.json") as resp:
        card = await resp.json()  # the card, and nothing else, stays public
    assert set(card["securitySchemes"]) == {"apiKey", "bearer"}
    assert card["securityRequirements"] == [{"schemes": {"apiKey": {}}},
                                            {"schemes": {"bearer": {"list": ["tasks"]}}}]


@pytest.mark.parametrize("binding", BINDINGS)
async def test_bad_credentials(stack: StackFactory, tmp_path: Path, issuer: Issuer,
                               binding: str) -> None:
    s = await secured(stack, tmp_path, issuer)
    stranger = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    cases = {
        "wrong key": {"X-API-Key": "nope"},
        "expired": {"Authorization": f"Bearer {issuer.token(exp=-120)}"},
        "wrong audience": {"Authorization": f"Bearer {issuer.token(aud='someone-else')}"},
        "wrong issuer": {"Authorization": f"Bearer {issuer.token(iss='https://evil.test')}"},
        "forged": {"Authorization": f"Bearer {issuer.token(key=stranger)}"},
        "unknown key id": {"Authorization": f"Bearer {issuer.token(key=stranger, kid='x')}"},
        "not a JWT": {"Authorization": "Bearer abc.def"},
        "scp not a list of strings": {"Authorization": "Bearer " + jwt.encode(
            {"sub": "x", "scp": [1, 2], "exp": int(time.time()) + 60, "aud": AUDIENCE,
             "iss": ISSUER}, issuer.keys[issuer.kid], algorithm="RS256",
            headers={"kid": issuer.kid})},
        "unreadable cookie, no key": {"Cookie": 'api_key="x'},
        "kid not a string": {"Authorization": "Bearer " + ".".join(
            base64.urlsafe_b64encode(json.dumps(part).encode()).decode().rstrip("=")
            for part in ({"alg": "RS256", "kid": ["k1"]}, {"sub": "x"})) + ".c2ln"},
        "alg none": {"Authorization": "Bearer " + jwt.encode(
            {"sub": "mallory", "exp": int(time.time()) + 60, "aud": AUDIENCE, "iss": ISSUER},
            "", algorithm="none")},
    }
    for why, headers in cases.items():
        seen = await refused(s, binding, "GetTask", pb.GetTaskRequest(id="t"), False, headers)
        assert seen.reason == "UNAUTHENTICATED", why
    narrow = {"Authorization": f"Bearer {issuer.token(scope='other')}"}
    seen = await refused(s, binding, "ListTasks", pb.ListTasksRequest(), False, narrow)
    assert seen.reason == "PERMISSION_DENIED" and "tasks" in seen.message


@pytest.mark.parametrize("binding", BINDINGS)
async def test_callers_see_only_their_own_tasks(stack: StackFactory, tmp_path: Path,
                                                issuer: Issuer, binding: str) -> None:
    s = await secured(stack, tmp_path, issuer)
    alice = s.binding(binding, {"X-API-Key": "alice-key"})
    bob = s.binding(binding, {"Authorization": f"Bearer {issuer.token('bob')}"})
    made = await alice.call("SendMessage", msg("ask"))
    task_id = made.task.id  # type: ignore[attr-defined]
    assert (await alice.call("GetTask", pb.GetTaskRequest(id=task_id))).id == task_id  # type: ignore[attr-defined]
    for rpc, req, streaming in [
            ("GetTask", pb.GetTaskRequest(id=task_id), False),
            ("CancelTask", pb.CancelTaskRequest(id=task_id), False),
            ("SubscribeToTask", pb.SubscribeToTaskRequest(id=task_id), True),
            ("SendMessage", msg("yes", task_id), False),
            ("CreateTaskPushNotificationConfig", pb.TaskPushNotificationConfig(
                task_id=task_id, url="https://hooks.example.com/b"), False),
            ("ListTaskPushNotificationConfigs",
             pb.ListTaskPushNotificationConfigsRequest(task_id=task_id), False)]:
        with pytest.raises(CallFailed) as info:
            await (bob.stream(rpc, req) if streaming else bob.call(rpc, req))
        assert info.value.reason == "TASK_NOT_FOUND", rpc
    listed = await bob.call("ListTasks", pb.ListTasksRequest())
    assert list(listed.tasks) == []  # type: ignore[attr-defined]
    mine = await alice.call("ListTasks", pb.ListTasksRequest())
    assert [t.id for t in mine.tasks] == [task_id]  # type: ignore[attr-defined]


async def test_api_keys_in_a_query_parameter_or_a_cookie(
        stack: StackFactory, tmp_path: Path, issuer: Issuer) -> None:
    for where in ("query", "cookie"):
        s = await secured(stack, tmp_path, issuer, key_in=where)
        url = s.base_url + "/tasks?api_key=alice-key" if where == "query" else s.base_url + "/tasks"
        cookies = {"Cookie": "theme=dark; api_key=alice-key"} if where == "cookie" else {}
        async with s.session.get(url, headers=cookies) as resp:
            assert resp.status == 200, await resp.text()
        async with s.session.get(s.base_url + "/tasks") as resp:
            assert resp.status == 401
            assert f'in="{where}", name="api_key"' in resp.headers["WWW-Authenticate"]


async def test_the_issuer_rotates_its_keys(stack: StackFactory, tmp_path: Path,
                                           issuer: Issuer) -> None:
    s = await secured(stack, tmp_path, issuer)
    grpc = s.binding("grpc")
    old = issuer.token()
    grpc.headers = {"Authorization": f"Bearer {old}"}
    await grpc.call("ListTasks", pb.ListTasksRequest())
    issuer.rotate()  # the old key is gone from the JWKS, a new one signs
    grpc.headers = {"Authorization": f"Bearer {issuer.token()}"}
    await grpc.call("ListTasks", pb.ListTasksRequest())  # unknown kid: refetched
    grpc.headers = {"Authorization": f"Bearer {old}"}
    with pytest.raises(CallFailed) as info:
        await grpc.call("ListTasks", pb.ListTasksRequest())
    assert info.value.reason == "UNAUTHENTICATED"


async def test_the_agent_knows_who_is_calling(stack: StackFactory, tmp_path: Path,
                                              issuer: Issuer) -> None:
    async def whoami(ctx: RequestContext, ev: TaskEvents) -> None:
        who = ctx.call.identity
        assert who is not None
        await ev.artifact(f"{who.subject} via {who.scheme} {sorted(who.scopes)}")
        await ev.complete()

    s = await secured(stack, tmp_path, issuer, agent=ScriptedAgent(whoami))
    token = issuer.token("carol", scope="tasks extra")
    done = await s.binding("rest", {"Authorization": f"Bearer {token}"}).call(
        "SendMessage", msg("who"))
    assert done.task.artifacts[0].parts[0].text == "carol via bearer ['extra', 'tasks']"  # type: ignore[attr-defined]


async def test_earlier_dialects_are_refused_too(stack: StackFactory, tmp_path: Path,
                                                   issuer: Issuer) -> None:
    s = await secured(stack, tmp_path, issuer)
    async with s.session.get(s.base_url + "/v1/tasks/x") as resp:  # 0.3 REST
        assert resp.status == 401 and (await resp.json())["code"] == -32040
    async with s.session.post(s.base_url + "/", json={"jsonrpc": "2.0", "id": 1,
                              "method": "message/send", "params": {"message": {
                                  "role": "user", "parts": [{"kind": "text", "text": "x"}],
                                  "messageId": "m"}}}) as resp:
        assert resp.status == 401 and "Bearer" in resp.headers["WWW-Authenticate"]
        assert (await resp.json())["error"]["code"] == -32040
    async with s.session.get(s.base_url + "/v1/tasks/x",
                             headers={"X-API-Key": "alice-key"}) as resp:
        assert resp.status == 404  # admitted; the task does not exist


def test_a_card_requirement_without_a_verifier_refuses_to_start() -> None:
    card = card_for(DemoAgent())
    card.security_schemes["corp"].http_auth_security_scheme.scheme = "Bearer"
    card.security_requirements.add().schemes["corp"].list.append("x")
    with pytest.raises(ValueError, match="corp"):
        Gate(card, {})


@pytest.mark.parametrize(("flags", "says"), [
    (["--api-keys", "/no/such/file"], "--api-keys /no/such/file"),
    (["--authenticator", "corp"], "SCHEME=MODULE:ATTR"),
    (["--authenticator", "corp=json:loads"], "declares no such security scheme"),
])
def test_bad_auth_flags_are_usage_errors(tmp_path: Path, flags: list[str], says: str) -> None:
    done = subprocess.run([sys.executable, "-m", "a2a_grpc", "serve", "--store", "memory",
                           "--grpc-port", "0", "--http-port", "0", *flags],
                          cwd=Path(__file__).parents[2], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 2 and says in done.stderr, done.stderr


@pytest.mark.parametrize("binding", ["GRPC", "JSONRPC", "HTTP+JSON"])
async def test_our_client_authenticates_as_the_card_asks(
        stack: StackFactory, tmp_path: Path, issuer: Issuer, binding: str) -> None:
    s = await secured(stack, tmp_path, issuer)
    s.http.app[CARD].update(public_card(s.handler.card, [
        Interface("GRPC", f"127.0.0.1:{s.grpc_server.port}"),
        Interface("JSONRPC", s.base_url + "/"), Interface("HTTP+JSON", s.base_url)]))
    for options in (ClientOptions(prefer=[binding], api_key="alice-key"),
                    ClientOptions(prefer=[binding], bearer=issuer.token())):
        async with await A2AClient.connect(s.base_url, options) as client:
            sent = await client.send_text("hello")
            assert sent.task.status.state == pb.TASK_STATE_COMPLETED
    async with await A2AClient.connect(s.base_url, ClientOptions(prefer=[binding])) as client:
        with pytest.raises(UnauthenticatedError) as info:
            await client.send_text("hello")
    assert "apiKey or bearer" in info.value.message
