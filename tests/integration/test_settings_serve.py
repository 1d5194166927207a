"""`a2a-grpc serve` as users configure it: a TOML file, environment variables
and flags together (a flag wins over a variable, a variable over the file),
and the API key and Basic user files reloaded on SIGHUP. Real processes."""

from __future__ import annotations

import asyncio
import base64
import signal
import sys
import uuid
from pathlib import Path

import aiohttp
import pytest

from a2a_grpc.auth.basic import hash_password
from tests.carried import carriers
from tests.processes import ROOT, reap, start_server


def send(text: str = "hello") -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {
        "messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": text}]}}}


async def test_a_config_file_variables_and_flags(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "a2a.toml"
    config.write_text("""
[network]
http_port = 1          # a flag names another: the flag wins
max_body = 100000      # a variable names another: the variable wins
[observability]
no_inspector = true    # only here: the file's
""")
    monkeypatch.setenv("A2A_GRPC_MAX_BODY", "300")
    server = await start_server("serve", "--config", str(config))
    try:
        async with aiohttp.ClientSession() as http:
            async with http.get(server.url + "/inspector") as resp:
                assert resp.status == 404  # the file turned it off
            async with http.post(server.url + "/", json=send(),
                                 headers={"A2A-Version": "1.0"}) as resp:
                assert resp.status == 200  # a small body passes
            async with http.post(server.url + "/", json=send("x" * 400),
                                 headers={"A2A-Version": "1.0"}) as resp:
                body = await resp.json()
        assert body["error"]["code"] == -32600  # over the variable's 300 bytes
        assert server.http_port != 1
    finally:
        reap(server.proc)


async def test_a_bad_config_is_a_usage_error_naming_it(tmp_path: Path) -> None:
    config = tmp_path / "a2a.toml"
    config.write_text("[network]\ngrpc_port = 'many'\n")
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "a2a_grpc", "serve", "--config", str(config), cwd=ROOT,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    _, err = await proc.communicate()
    assert proc.returncode == 2
    assert f"[network] grpc_port in {config}" in err.decode()


def _basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


@pytest.mark.parametrize("carrier", carriers())
async def test_credentials_files_reload_on_sighup(tmp_path: Path, carrier: str) -> None:
    """On pyvoy, `serve` passes SIGHUP on to the app Envoy runs."""
    keys, users = tmp_path / "keys.txt", tmp_path / "users.txt"
    keys.write_text("alice:key-one\n")
    users.write_text(f"carol:{hash_password('pw-one')}\n")
    server = await start_server("serve", "--api-keys", str(keys), "--basic-users", str(users),
                                "--grpc-carrier", carrier)
    try:
        async with aiohttp.ClientSession() as http:
            async def status(**headers: str) -> int:
                async with http.post(server.url + "/", headers={"A2A-Version": "1.0", **headers},
                                     json=send()) as resp:
                    return resp.status

            assert await status(**{"X-API-Key": "key-one"}) == 200
            assert await status(Authorization=_basic("carol", "pw-one")) == 200
            keys.write_text("bob:key-two\n")
            users.write_text(f"dave:{hash_password('pw-two')}\n")
            server.proc.send_signal(signal.SIGHUP)
            await server.logged("Basic users reloaded")
            assert "API keys reloaded" in server.log()
            assert await status(**{"X-API-Key": "key-one"}) == 401  # gone with the old file
            assert await status(**{"X-API-Key": "key-two"}) == 200
            assert await status(Authorization=_basic("carol", "pw-one")) == 401  # not remembered
            assert await status(Authorization=_basic("dave", "pw-two")) == 200
            keys.write_text("no colon on this line\n")  # a broken file keeps the old keys
            server.proc.send_signal(signal.SIGHUP)
            await server.logged("API keys not reloaded")
            assert await status(**{"X-API-Key": "key-two"}) == 200
    finally:
        reap(server.proc)
