"""The schemes beyond API keys and Bearer, on every binding over real sockets:
HTTP Basic, OAuth 2 client credentials (tokens fetched by our client from a
real token endpoint), per-skill requirements, and the extended card tailored
to the caller. Our client is driven from the card alone."""

from __future__ import annotations

import asyncio
import base64
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from a2a_grpc.agent import AgentExecutor, RequestContext, TaskEvents
from a2a_grpc.auth import Gate
from a2a_grpc.auth.basic import hash_password
from a2a_grpc.auth.config import AuthOptions, configure
from a2a_grpc.bridge import CARD
from a2a_grpc.cards.card import Interface, card_for, public_card
from a2a_grpc.client import A2AClient, ClientCredentialsGrant, ClientOptions
from a2a_grpc.core.call import CallContext
from a2a_grpc.core.errors import PermissionDeniedError, UnauthenticatedError
from a2a_grpc.demos.demo import DemoAgent
from a2a_grpc.generated import a2a_pb2 as pb
from tests.bindings import CallFailed
from tests.conftest import Stack, StackFactory
from tests.issuer import AUDIENCE, ISSUER, Issuer
from tests.issuer import issuer as issuer  # the fixture

BINDINGS = ["grpc", "jsonrpc", "rest"]
CLIENT_BINDINGS = ["GRPC", "JSONRPC", "HTTP+JSON"]
ROOT = Path(__file__).parents[2]


def msg(text: str) -> pb.SendMessageRequest:
    return pb.SendMessageRequest(message=pb.Message(
        message_id=f"m-{time.monotonic_ns()}", role=pb.ROLE_USER, parts=[pb.Part(text=text)]))


def basic(user: str, password: str) -> dict[str, str]:
    return {"Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}


async def secured(stack: StackFactory, options: AuthOptions, agent: AgentExecutor | None = None,
                  card: pb.AgentCard | None = None) -> Stack:
    """A stack whose card asks for `options`' schemes, published with its
    interfaces (as `serve` does), so that our client can be driven by it."""
    agent = agent or DemoAgent()
    card = card or card_for(agent)
    gate = Gate(card, configure(card, options))
    s = await stack(agent, card=card, gate=gate)
    s.handler.card = public_card(s.handler.card, [
        Interface("GRPC", f"127.0.0.1:{s.grpc_server.port}"),
        Interface("JSONRPC", s.base_url + "/"), Interface("HTTP+JSON", s.base_url)])
    s.http.app[CARD].update(s.handler.card)
    return s


def users_file(tmp_path: Path) -> Path:
    path = tmp_path / "users.txt"
    path.write_text(f"# made by a2a-grpc passwd\nalice:{hash_password('wonderland')}\n")
    return path


@pytest.mark.parametrize("binding", BINDINGS)
async def test_http_basic(stack: StackFactory, tmp_path: Path, binding: str) -> None:
    s = await secured(stack, AuthOptions(basic_users=users_file(tmp_path)))
    card = s.handler.card
    assert card.security_schemes["basic"].http_auth_security_scheme.scheme == "Basic"
    for why, headers in {
            "none": {},
            "wrong password": basic("alice", "looking-glass"),
            "unknown user": basic("mallory", "wonderland"),
            "not base64": {"Authorization": "Basic %%%"},
            "no colon": {"Authorization": "Basic " + base64.b64encode(b"alice").decode()},
    }.items():
        with pytest.raises(CallFailed) as info:
            await s.binding(binding, headers).call("ListTasks", pb.ListTasksRequest())
        assert info.value.reason == "UNAUTHENTICATED", why
    alice = s.binding(binding, basic("alice", "wonderland"))
    for _ in range(2):  # the second is remembered, not hashed again
        done = await alice.call("SendMessage", msg("whoami"))
        assert done.message.parts[0].text == "alice (by basic)"  # type: ignore[attr-defined]


async def test_basic_refusals_over_http_name_the_scheme(stack: StackFactory,
                                                        tmp_path: Path) -> None:
    s = await secured(stack, AuthOptions(basic_users=users_file(tmp_path)))
    async with s.session.get(s.base_url + "/tasks", headers=basic("alice", "x")) as resp:
        assert resp.status == 401
        assert resp.headers["WWW-Authenticate"].startswith('Basic realm="a2a"')


@pytest.mark.parametrize("binding", CLIENT_BINDINGS)
async def test_our_client_sends_basic_and_api_keys_where_the_card_says(
        stack: StackFactory, tmp_path: Path, binding: str) -> None:
    s = await secured(stack, AuthOptions(basic_users=users_file(tmp_path)))
    options = ClientOptions(prefer=[binding], basic=("alice", "wonderland"))
    async with await A2AClient.connect(s.base_url, options) as client:
        assert (await client.send_text("whoami")).message.parts[0].text == "alice (by basic)"
    keys = tmp_path / "keys.txt"
    keys.write_text("bob:bob-key\n")
    for where in ("header", "query", "cookie"):
        s = await secured(stack, AuthOptions(api_keys=keys, api_key_in=where,
                                             api_key_name="k"))
        options = ClientOptions(prefer=[binding], api_key="bob-key",
                                headers={"Cookie": "theme=dark"})
        async with await A2AClient.connect(s.base_url, options) as client:
            sent = await client.send_text("whoami")
            assert sent.message.parts[0].text == "bob (by apiKey)", where
            assert (await client.list_tasks(pb.ListTasksRequest())).tasks is not None


def oauth2(issuer: Issuer, **kw: Any) -> AuthOptions:
    return AuthOptions(jwt_jwks=issuer.jwks_url, jwt_issuer=ISSUER, jwt_audience=AUDIENCE,
                       oauth2_token_url=issuer.token_url, scopes=("tasks",), **kw)


@pytest.mark.parametrize("binding", CLIENT_BINDINGS)
async def test_oauth2_client_credentials(stack: StackFactory, issuer: Issuer,
                                         binding: str) -> None:
    s = await secured(stack, oauth2(issuer))
    flow = s.handler.card.security_schemes["oauth2"].oauth2_security_scheme.flows
    assert flow.client_credentials.token_url == issuer.token_url
    issuer.clients["robot"] = ("s3cret", "robot-7")
    grant = ClientCredentialsGrant("robot", "s3cret")  # the token URL comes from the card
    async with await A2AClient.connect(s.base_url, ClientOptions(prefer=[binding],
                                                                 oauth2=grant)) as client:
        first = await client.send_text("whoami")
        assert first.message.parts[0].text == "robot-7 (by oauth2 with scopes tasks)"
        await client.list_tasks(pb.ListTasksRequest())
        assert [g["scope"] for g in issuer.grants] == ["tasks"]  # fetched once, reused
    issuer.grant_audiences.append("somewhere-else")  # the next token: refused by the agent
    async with await A2AClient.connect(s.base_url, ClientOptions(prefer=[binding],
                                                                 oauth2=grant)) as client:
        again = await client.send_text("whoami")  # refused once; a new token; the call again
        assert again.message.parts[0].text == first.message.parts[0].text
        assert len(issuer.grants) == 3
    issuer.grant_audiences.extend(["somewhere-else"] * 2)  # refused twice: the error shows
    async with await A2AClient.connect(s.base_url, ClientOptions(prefer=[binding],
                                                                 oauth2=grant)) as client:
        with pytest.raises(UnauthenticatedError, match=r"(?i)audience"):
            await client.send_text("hi")
    wrong = ClientCredentialsGrant("robot", "guess")
    async with await A2AClient.connect(s.base_url, ClientOptions(prefer=[binding],
                                                                 oauth2=wrong)) as client:
        with pytest.raises(UnauthenticatedError, match="refused the client: invalid_client"):
            await client.send_text("hi")


async def test_an_expiring_token_is_fetched_again_before_it_expires(
        stack: StackFactory, issuer: Issuer) -> None:
    s = await secured(stack, oauth2(issuer))
    issuer.clients["robot"] = ("s3cret", "robot-7")
    issuer.token_lifetime = 20  # inside the client's 30 s margin: every call fetches anew
    grant = ClientCredentialsGrant("robot", "s3cret", scopes=["tasks", "extra"])
    async with await A2AClient.connect(s.base_url, ClientOptions(oauth2=grant)) as client:
        await client.list_tasks(pb.ListTasksRequest())
        await client.list_tasks(pb.ListTasksRequest())
    assert [g["scope"] for g in issuer.grants] == ["tasks extra"] * 2


async def test_oauth2_through_openid_discovery(stack: StackFactory, issuer: Issuer) -> None:
    base = str(issuer.server.make_url("")).rstrip("/")
    s = await secured(stack, AuthOptions(oidc_issuer=base, jwt_issuer=ISSUER,
                                         jwt_audience=AUDIENCE))
    issuer.clients["robot"] = ("s3cret", "robot-7")
    grant = ClientCredentialsGrant("robot", "s3cret")  # the token endpoint from discovery
    async with await A2AClient.connect(s.base_url, ClientOptions(oauth2=grant)) as client:
        sent = await client.send_text("whoami")
        assert sent.message.parts[0].text == "robot-7 (by oidc)"
    issuer.discovery_names_token_endpoint = False
    async with await A2AClient.connect(s.base_url, ClientOptions(oauth2=grant)) as client:
        with pytest.raises(UnauthenticatedError, match="names no token_endpoint"):
            await client.send_text("hi")


class Skilled(AgentExecutor):
    """`admin ...` needs the `admin` skill, whose requirements ask for more."""

    def __init__(self) -> None:
        self.card = card_for(DemoAgent())
        skill = self.card.skills.add(id="admin", name="Admin", description="privileged",
                                     tags=["ops"])
        skill.security_requirements.add().schemes["bearer"].list.append("admin")

    async def execute(self, context: RequestContext, events: TaskEvents) -> None:
        if context.text.startswith("admin"):
            context.require_skill("admin")
        await events.reply(f"done: {context.text}")

    async def extended_card(self, call: CallContext) -> pb.AgentCard:
        card = pb.AgentCard()
        card.CopyFrom(self.card)
        card.description = f"for {call.user}"
        return card


@pytest.mark.parametrize("binding", BINDINGS)
async def test_a_skill_asks_for_more_than_the_agent(stack: StackFactory, issuer: Issuer,
                                                    binding: str) -> None:
    agent = Skilled()
    options = AuthOptions(jwt_jwks=issuer.jwks_url, jwt_issuer=ISSUER, jwt_audience=AUDIENCE,
                          scopes=("tasks",))
    s = await secured(stack, options, agent, agent.card)
    user = s.binding(binding, {"Authorization": f"Bearer {issuer.token('ursula')}"})
    admin = s.binding(binding, {"Authorization":
                                f"Bearer {issuer.token('ada', scope='tasks admin')}"})
    assert (await user.call("SendMessage", msg("hello"))).message.parts[0].text == "done: hello"  # type: ignore[attr-defined]
    with pytest.raises(CallFailed) as info:
        await user.call("SendMessage", msg("admin reboot"))
    assert info.value.reason == "PERMISSION_DENIED" and "'admin'" in info.value.message
    done = await admin.call("SendMessage", msg("admin reboot"))
    assert done.message.parts[0].text == "done: admin reboot"  # type: ignore[attr-defined]
    mine = await user.call("GetExtendedAgentCard", pb.GetExtendedAgentCardRequest())
    assert "admin" not in [k.id for k in mine.skills] and mine.description == "for ursula"  # type: ignore[attr-defined]
    assert list(mine.supported_interfaces) == list(s.handler.card.supported_interfaces)  # type: ignore[attr-defined]
    theirs = await admin.call("GetExtendedAgentCard", pb.GetExtendedAgentCardRequest())
    assert "admin" in [k.id for k in theirs.skills]  # type: ignore[attr-defined]
    with pytest.raises(CallFailed) as info:
        await s.binding(binding).call("GetExtendedAgentCard", pb.GetExtendedAgentCardRequest())
    assert info.value.reason == "UNAUTHENTICATED"


async def test_our_client_reads_require_skill_refusals_as_typed(stack: StackFactory,
                                                                issuer: Issuer) -> None:
    agent = Skilled()
    options = AuthOptions(jwt_jwks=issuer.jwks_url, jwt_issuer=ISSUER, jwt_audience=AUDIENCE)
    s = await secured(stack, options, agent, agent.card)
    async with await A2AClient.connect(s.base_url,
                                       ClientOptions(bearer=issuer.token())) as client:
        with pytest.raises(PermissionDeniedError):
            await client.send_text("admin")


def test_a_skill_requirement_needs_a_verifier() -> None:
    card = Skilled().card
    with pytest.raises(ValueError, match="skill 'admin' requires security scheme 'bearer'"):
        Gate(card, {})


def run_cli(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "a2a_grpc", *args], cwd=ROOT, input=stdin,
                          capture_output=True, text=True, timeout=60, check=False)


@pytest.mark.parametrize(("flags", "says"), [
    (["--oauth2-token-url", "https://idp.example/token"], "--jwt-jwks or --jwt-key"),
    (["--basic-users", "PLAIN"], "passwords are never stored in clear"),
])
def test_bad_flags_are_usage_errors(tmp_path: Path, flags: list[str], says: str) -> None:
    plain = tmp_path / "plain.txt"
    plain.write_text("alice:wonderland\n")
    flags = [str(plain) if f == "PLAIN" else f for f in flags]
    done = run_cli("serve", "--store", "memory", "--grpc-port", "0", "--http-port", "0", *flags)
    assert done.returncode == 2 and says in done.stderr, done.stderr


async def test_passwd_makes_a_line_basic_accepts(tmp_path: Path) -> None:
    made = run_cli("passwd", "carol", stdin="s3cret\n")
    assert made.returncode == 0, made.stderr
    path = tmp_path / "users.txt"
    path.write_text(made.stdout)
    verifier = configure(pb.AgentCard(), AuthOptions(basic_users=path))["basic"]
    ctx = CallContext.from_headers(basic("carol", "s3cret"))
    assert (await verifier.verify(ctx)) is not None
    assert "s3cret" not in made.stdout
    assert run_cli("passwd", "a:b", stdin="x\n").returncode == 2
    assert run_cli("passwd", "dave", stdin="\n").returncode == 2


async def test_a_non_ascii_basic_credential_is_401_not_500(stack: StackFactory,
                                                           tmp_path: Path) -> None:
    s = await secured(stack, AuthOptions(basic_users=users_file(tmp_path)))
    reader, writer = await asyncio.open_connection("127.0.0.1", s.http.port)
    writer.write(b"GET /tasks HTTP/1.0\r\nHost: x\r\n"
                 b"Authorization: Basic \xc3\xa9t\xc3\xa9\r\n\r\n")  # not ASCII
    await writer.drain()
    answer = await reader.read()
    writer.close()
    assert b" 401 " in answer.split(b"\r\n")[0], answer[:300]
    assert b"not base64" in answer
