"""TLS and mutual TLS on both ports of a real `a2a-grpc serve`, with
certificates made at test time, and a certificate replaced while a stream is
open: new handshakes get the new one, the open stream goes on."""

from __future__ import annotations

import asyncio
import signal
import socket
import ssl
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import grpc
import pytest
from cryptography import x509

from a2a_grpc.client import A2AClient, ClientOptions
from a2a_grpc.client.errors import AgentUnreachableError
from a2a_grpc.core.errors import TaskNotFoundError
from a2a_grpc.generated import a2a_pb2 as pb
from a2a_grpc.generated.a2a_pb2_grpc import A2AServiceStub
from tests.carried import carriers
from tests.certs import Authority, Issued
from tests.processes import Server, reap, start_server

BINDINGS = ["GRPC", "JSONRPC", "HTTP+JSON"]


@pytest.fixture
def ca(tmp_path: Path) -> Authority:
    return Authority(tmp_path)


async def serving(ca: Authority, *extra: str) -> tuple[Server, Issued]:
    issued = ca.issue("127.0.0.1", file="server")
    server = await start_server("serve", "--store", "memory", "--tls-cert", str(issued.cert),
                                "--tls-key", str(issued.key), *extra)
    return server, issued


@pytest.fixture
async def servers() -> AsyncIterator[list[Server]]:
    started: list[Server] = []
    yield started
    for s in started:
        reap(s.proc)


def https(server: Server) -> str:
    return f"https://127.0.0.1:{server.http_port}"


def serial_of(port: int, ca: Authority, alpn: str | None = None) -> int:
    """The serial number of the certificate a new handshake on `port` presents."""
    ctx = ssl.create_default_context(cafile=str(ca.path))
    if alpn:
        ctx.set_alpn_protocols([alpn])
    with socket.create_connection(("127.0.0.1", port), timeout=5) as raw, \
            ctx.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
        der = tls.getpeercert(binary_form=True)
    assert der is not None
    return x509.load_der_x509_certificate(der).serial_number


@pytest.mark.parametrize("carrier", carriers())
@pytest.mark.parametrize("binding", BINDINGS)
async def test_tls_on_every_binding(ca: Authority, servers: list[Server], binding: str,
                                    carrier: str) -> None:
    server, _ = await serving(ca, "--grpc-carrier", carrier)
    servers.append(server)
    options = ClientOptions(prefer=[binding], ca_file=str(ca.path))
    async with await A2AClient.connect(https(server), options) as client:
        card = client.card
        sent = await client.send_text("over TLS")
    assert sent.task.artifacts[0].parts[0].text == "echo: over TLS"
    urls = {i.protocol_binding: i.url for i in card.supported_interfaces}
    assert urls["JSONRPC"].startswith("https://") and urls["HTTP+JSON"].startswith("https://")
    assert f"HTTPS on 127.0.0.1:{server.http_port}" in server.log()  # as it serves it
    # Nothing in clear text, and no trust without the CA.
    async with aiohttp.ClientSession() as http:
        with pytest.raises(aiohttp.ClientError):
            await http.get(f"http://127.0.0.1:{server.http_port}/.well-known/agent-card.json")
    async with grpc.aio.insecure_channel(server.target) as channel:
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await A2AServiceStub(channel).GetTask(pb.GetTaskRequest(id="x"), timeout=5)
    assert info.value.code() == grpc.StatusCode.UNAVAILABLE
    with pytest.raises(AgentUnreachableError):
        await A2AClient.connect(https(server), ClientOptions(prefer=[binding]))


@pytest.mark.parametrize("carrier", carriers())
@pytest.mark.parametrize("binding", BINDINGS)
async def test_mutual_tls_admits_by_certificate(ca: Authority, servers: list[Server],
                                                binding: str, carrier: str) -> None:
    server, _ = await serving(ca, "--tls-client-ca", str(ca.path), "--tls-require-client-cert",
                              "--grpc-carrier", carrier)
    servers.append(server)
    alice, bob = ca.issue("alice", client=True), ca.issue("bob", client=True)

    def as_(who: Issued) -> ClientOptions:
        return ClientOptions(prefer=[binding], ca_file=str(ca.path), cert_file=str(who.cert),
                             key_file=str(who.key))

    async with await A2AClient.connect(https(server), as_(alice)) as client:
        assert "mtls" in client.card.security_schemes
        task = (await client.send_text("mine")).task
    async with await A2AClient.connect(https(server), as_(bob)) as client:
        with pytest.raises(TaskNotFoundError):
            await client.get_task(pb.GetTaskRequest(id=task.id))
    stranger = Authority(ca.folder, "other CA").issue("mallory", client=True)
    for who in (None, stranger):  # no certificate, or one our CA did not sign
        options = (ClientOptions(prefer=[binding], ca_file=str(ca.path)) if who is None
                   else as_(who))
        with pytest.raises((AgentUnreachableError, aiohttp.ClientError)):
            async with await A2AClient.connect(https(server), options) as client:
                await client.send_text("let me in")


@pytest.mark.parametrize("carrier", carriers())
async def test_a_replaced_certificate_is_used_without_dropping_calls(
        ca: Authority, servers: list[Server], carrier: str) -> None:
    """On pyvoy, Envoy's: `serve` writes the secret files it watches."""
    server, first = await serving(ca, "--grpc-carrier", carrier)
    servers.append(server)
    assert serial_of(server.http_port, ca) == first.serial
    options = ClientOptions(prefer=["GRPC"], ca_file=str(ca.path))
    async with await A2AClient.connect(https(server), options) as client:
        events = aiter(client.stream_text("slow 4"))
        await anext(events)  # the stream is open, on the first certificate
        second = ca.issue("127.0.0.1", file="server")  # replaced in place
        server.proc.send_signal(signal.SIGHUP)  # HTTP: at once (else within 2 s)
        for _ in range(50):
            if serial_of(server.http_port, ca) == second.serial:
                break
            await asyncio.sleep(0.1)
        assert serial_of(server.http_port, ca) == second.serial
        assert serial_of(server.grpc_port, ca, alpn="h2") == second.serial
        rest = [e async for e in events]  # the open call was not dropped
    assert rest[-1].status_update.status.state == pb.TASK_STATE_COMPLETED
    await server.logged("TLS certificate reloaded")  # logged once the new one is in use


def test_tls_flags_must_come_together(tmp_path: Path) -> None:
    import subprocess
    import sys

    for flags, says in ((["--tls-cert", "x.pem"], "both --tls-cert and --tls-key"),
                        (["--tls-client-ca", "ca.pem"], "needs --tls-cert"),
                        (["--tls-cert", "nope.pem", "--tls-key", "nope.key"], "--tls-cert")):
        done = subprocess.run([sys.executable, "-m", "a2a_grpc", "serve", "--store", "memory",
                               "--grpc-port", "0", "--http-port", "0", *flags],
                              cwd=Path(__file__).parents[2], capture_output=True, text=True,
                              timeout=60, check=False)
        assert done.returncode == 2 and says in done.stderr, done.stderr
