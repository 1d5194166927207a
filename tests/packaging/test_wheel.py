"""What users install: the wheel, in a fresh virtualenv outside the repository.

It owns one import name, `a2a_grpc` (bridge/ and generated/ are in it as
a2a_grpc.bridge and a2a_grpc.generated), so a `bridge.py` or a `generated/`
of the user's own, in the working directory, changes nothing: `serve` starts
there and answers a SendMessage on each binding.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import uuid
import zipfile
from pathlib import Path

import aiohttp
import grpc
import pytest

from a2a_grpc.generated import a2a_pb2 as pb
from a2a_grpc.generated import a2a_pb2_grpc
from tests.packaging.installed import HEADERS, ROOT, message, run, serving
from tests.redis_bus import bus_url, drop_prefix, redis_prefix
from tests.stores import drop_schema, postgres_schema, postgres_url


def test_the_wheel_owns_one_import_name(installed: tuple[Path, Path]) -> None:
    wheel, python = installed
    dist_info = wheel.name.split("-py")[0] + ".dist-info"  # a2a_grpc-VERSION.dist-info
    with zipfile.ZipFile(wheel) as z:
        assert {name.split("/")[0] for name in z.namelist()} == {"a2a_grpc", dist_info}
    site = Path(run(python, "-c", "import a2a_grpc, os; print(os.path.dirname("
                     "os.path.dirname(a2a_grpc.__file__)))", cwd=wheel.parent).strip())
    ours = {p.name for p in site.iterdir()
            if p.name.startswith(("a2a_grpc", "bridge", "generated"))}
    assert ours == {"a2a_grpc", dist_info}
    shipped = run(python, "-c", "import a2a_grpc.bridge.inspector.api as i, a2a_grpc.generated."
                   "a2a_pb2 as p, pathlib; print(sorted(f.name for f in pathlib.Path("
                   "i.__file__).parent.iterdir()), p.DESCRIPTOR.name)",
                   cwd=wheel.parent)
    assert "app.js" in shipped and "a2a_grpc/generated/a2a.proto" in shipped


async def test_serve_from_a_folder_with_a_bridge_and_a_generated_of_its_own(
        installed: tuple[Path, Path], tmp_path: Path) -> None:
    _, python = installed
    (tmp_path / "bridge.py").write_text("raise RuntimeError('the user\\'s own bridge.py')\n")
    (tmp_path / "generated").mkdir()
    (tmp_path / "generated" / "__init__.py").write_text("raise RuntimeError('not ours')\n")
    # `python -m` puts the working directory first on sys.path: the strictest case.
    async with serving(python, tmp_path, "--store", "memory") as (grpc_port, http_port):
        base = f"http://127.0.0.1:{http_port}"
        async with aiohttp.ClientSession(headers=HEADERS) as http:
            async with http.post(base + "/", json={"jsonrpc": "2.0", "id": 1,
                                                   "method": "SendMessage",
                                                   "params": {"message": message()}}) as resp:
                rpc = await resp.json()
            async with http.post(base + "/message:send", json={"message": message()}) as resp:
                rest = await resp.json()
        assert rpc["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
        assert rest["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
        async with grpc.aio.insecure_channel(f"127.0.0.1:{grpc_port}") as channel:
            answer = await a2a_pb2_grpc.A2AServiceStub(channel).SendMessage(
                pb.SendMessageRequest(message=pb.Message(
                    message_id=str(uuid.uuid4()), role=pb.ROLE_USER,
                    parts=[pb.Part(text="hello")])), metadata=(("a2a-version", "1.0"),))
        assert answer.task.status.state == pb.TASK_STATE_COMPLETED
        # the client's card check needs [auth] and says so
        done = await asyncio.to_thread(subprocess.run, [
            str(python), "-m", "a2a_grpc", "card", base, "--verify"], cwd=tmp_path,
            capture_output=True, text=True, timeout=60, check=False)
        assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
        assert done.stderr.strip().endswith("pip install 'a2a-grpc[auth]'"), done.stderr


async def test_workers_from_the_wheel_on_the_default_store(
        installed: tuple[Path, Path], tmp_path: Path) -> None:
    """`serve --workers 2` as installed: the supervisor runs its workers with
    the virtualenv's Python; both answer on the one port, from the SQLite
    file in the working directory."""
    _, python = installed
    async with serving(python, tmp_path, "--workers", "2") as (_, http_port):
        base, seen = f"http://127.0.0.1:{http_port}", set()
        for _ in range(200):
            async with aiohttp.ClientSession(headers=HEADERS) as http:  # a new connection
                async with http.post(base + "/message:send", json={"message": message()}) \
                        as resp:
                    assert (await resp.json())["task"]["status"]["state"] == \
                        "TASK_STATE_COMPLETED"
                async with http.get(base + "/metrics") as resp:
                    seen.add((await resp.text()).split('a2a_worker_info{pid="')[1][:8])
            if len(seen) == 2:
                break
        assert len(seen) == 2, "both workers answered"
    assert (tmp_path / "a2a-grpc.db").exists()


@pytest.mark.parametrize(("flags", "env", "extra"), [
    (("--bus", "redis://127.0.0.1:6379/0"), {}, "redis"),
    (("--store", "postgresql://postgres@127.0.0.1:5432/test"), {}, "postgres"),
    ((), {"OTEL_TRACES_EXPORTER": "otlp"}, "otel"),
    (("--push-keys", "keys"), {}, "auth"),
    (("--card-keys", "keys"), {}, "auth"),
    (("--push-secret-keys", "keys"), {}, "auth"),
    (("--jwt-jwks", "https://issuer.example/jwks.json"), {}, "auth"),
    (("--oidc-issuer", "https://issuer.example"), {}, "auth"),
])
def test_the_base_install_names_the_extra_a_feature_needs(
        installed: tuple[Path, Path], tmp_path: Path, flags: tuple[str, ...],
        env: dict[str, str], extra: str) -> None:
    """The wheel alone serves every binding (above); asking for what an extra
    brings is one line naming the extra, not a traceback."""
    _, python = installed
    done = subprocess.run(
        [str(python), "-m", "a2a_grpc", "serve", "--store", "memory", "--grpc-port", "0",
         "--http-port", "0", *flags], cwd=tmp_path, capture_output=True, text=True,
        timeout=60, env={**os.environ, **env}, check=False)
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"pip install 'a2a-grpc[{extra}]'" in done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    errors = [line for line in done.stderr.splitlines() if " INFO " not in line]
    assert errors == [line for line in errors if line.startswith("a2a-grpc: ")], done.stderr
    assert len(errors) == 1, done.stderr  # one line, besides the start-up's log


def test_the_base_install_leaves_the_extras_out(installed: tuple[Path, Path]) -> None:
    _, python = installed
    names = run(python, "-m", "pip", "list", "--format=freeze", cwd=python.parent).lower()
    for package in ("asyncpg", "redis", "opentelemetry-sdk", "opentelemetry-exporter-otlp",
                    "pyjwt", "cryptography"):
        assert f"\n{package}" not in "\n" + names, package


def test_the_installed_version_is_the_wheels(installed: tuple[Path, Path]) -> None:
    wheel, python = installed
    version = wheel.name.split("-")[1]
    shown = run(python, "-m", "a2a_grpc", "--version", cwd=wheel.parent)
    assert shown.startswith(f"a2a-grpc {version}, serving A2A 1.0 ")
    assert "A2A 0.3" in shown and "the first draft" in shown
    assert run(python, "-c", "import a2a_grpc; print(a2a_grpc.__version__)",
                cwd=wheel.parent).strip() == version
    card = run(python, "-c", "from a2a_grpc.demos.demo import demo_card; "
                "print(demo_card().version)", cwd=wheel.parent).strip()
    assert card == version  # the demo agent ships with the server: one version


def test_the_contract_ships_for_other_languages(installed: tuple[Path, Path],
                                               tmp_path: Path) -> None:
    """`a2a-grpc proto --out DIR` from the installed wheel writes files protoc
    compiles with nothing but DIR (and its own well-known types)."""
    _, python = installed
    out = tmp_path / "protos"
    listed = run(python, "-m", "a2a_grpc", "proto", "--out", out, cwd=tmp_path).split()
    assert (out / "a2a.proto").read_bytes() == (ROOT / "proto" / "a2a.proto").read_bytes()
    for name in ("google/api/annotations.proto", "google/api/http.proto",
                 "google/rpc/status.proto", "google/rpc/error_details.proto"):
        assert str(out / name) in listed, name
    import grpc_tools  # the dev environment's protoc, standing in for another language's
    from google.protobuf import descriptor_pb2

    well_known = Path(grpc_tools.__file__).parent / "_proto"
    pb = tmp_path / "a2a.pb"
    run(sys.executable, "-m", "grpc_tools.protoc", f"-I{out}", f"-I{well_known}",
         "--include_imports", f"--descriptor_set_out={pb}", "a2a.proto",
         "google/rpc/error_details.proto", cwd=tmp_path)
    files = descriptor_pb2.FileDescriptorSet.FromString(pb.read_bytes()).file
    [ours] = [f for f in files if f.name == "a2a.proto"]
    [service] = ours.service
    assert (ours.package, service.name, len(service.method)) == ("lf.a2a.v1", "A2AService", 11)


async def test_the_all_install_serves_with_every_extra(installed_all: Path, tmp_path: Path) -> None:
    """`[all]`: PostgreSQL store, Redis bus, signed push notifications and card,
    and the client checking the card's signature, from the installed wheel."""
    schema, prefix = await postgres_schema(), await redis_prefix()
    try:
        async with serving(installed_all, tmp_path, "--store", postgres_url(schema),
                            "--bus", bus_url(prefix), "--push-keys", str(tmp_path / "push"),
                            "--card-keys", str(tmp_path / "card")) as (_, http_port):
            base = f"http://127.0.0.1:{http_port}"
            async with aiohttp.ClientSession(headers=HEADERS) as http:
                async with http.post(base + "/message:send", json={"message": message()}) as r:
                    sent = await r.json()
                async with http.get(base + "/.well-known/agent-card.json") as resp:
                    card = await resp.json()
            assert sent["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
            assert card["capabilities"]["pushNotifications"] and card["signatures"]
            checked = await asyncio.to_thread(
                run, installed_all, "-m", "a2a_grpc", "card", base, "--verify", cwd=tmp_path)
            assert "signature: valid" in checked
    finally:
        await drop_schema(schema)
        await drop_prefix(prefix)


WORDY_AGENT = '''
from a2a_grpc import AgentExecutor
from a2a_grpc.generated.a2a_pb2 import AgentCard


class Wordy(AgentExecutor):
    """Modes as the JavaScript SDK's samples write them: bare words."""

    card = AgentCard(name="wordy", description="d", version="1",
                     default_input_modes=["text"],
                     default_output_modes=["text", "task-status"])

    async def execute(self, context, events):
        await events.artifact("got " + context.text)
        await events.complete()
'''


async def test_a_card_with_bare_word_modes_takes_text(installed: tuple[Path, Path],
                                                       tmp_path: Path) -> None:
    """`["text"]` is read as text/*: text reaches the agent on every binding; a part
    of another type is still refused; the unknown word is named once at start."""
    _, python = installed
    (tmp_path / "wordy.py").write_text(WORDY_AGENT)
    printed: list[str] = []
    unknown = {"messageId": "u", "role": "ROLE_USER", "parts": [
        {"raw": "AAE=", "mediaType": "application/x-unknown", "filename": "x.bin"}]}
    async with serving(python, tmp_path, "--store", "memory", "--agent", "wordy:Wordy",
                       log=printed) as (grpc_port, http_port):
        warned = [line for line in printed if "WARNING" in line and "modes" in line]
        assert len(warned) == 1 and "'task-status'" in warned[0], printed
        assert "'text'" not in warned[0]
        base = f"http://127.0.0.1:{http_port}"
        async with aiohttp.ClientSession(headers=HEADERS) as http:
            async with http.post(base + "/", json={"jsonrpc": "2.0", "id": 1,
                                                   "method": "SendMessage",
                                                   "params": {"message": message()}}) as resp:
                rpc = await resp.json()
            async with http.post(base + "/message:send", json={"message": message()}) as resp:
                rest = await resp.json()
            async with http.post(base + "/", json={"jsonrpc": "2.0", "id": 2,
                                                   "method": "SendMessage",
                                                   "params": {"message": unknown}}) as resp:
                refused_rpc = await resp.json()
            async with http.post(base + "/message:send", json={"message": unknown}) as resp:
                refused_rest = resp.status, await resp.json()
        assert rpc["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED", rpc
        assert rest["task"]["artifacts"][0]["parts"][0]["text"] == "got hello"
        assert refused_rpc["error"]["code"] == -32005
        assert refused_rest[0] == 400
        assert refused_rest[1]["error"]["status"] == "INVALID_ARGUMENT"
        async with grpc.aio.insecure_channel(f"127.0.0.1:{grpc_port}") as channel:
            stub = a2a_pb2_grpc.A2AServiceStub(channel)
            answer = await stub.SendMessage(pb.SendMessageRequest(message=pb.Message(
                message_id=str(uuid.uuid4()), role=pb.ROLE_USER,
                parts=[pb.Part(text="hello")])), metadata=(("a2a-version", "1.0"),))
            assert answer.task.status.state == pb.TASK_STATE_COMPLETED
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await stub.SendMessage(pb.SendMessageRequest(message=pb.Message(
                    message_id="u-grpc", role=pb.ROLE_USER, parts=[pb.Part(
                        raw=b"\x00", media_type="application/x-unknown")])),
                    metadata=(("a2a-version", "1.0"),))
            assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
