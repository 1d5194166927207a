"""The SQLite store on a small filesystem of the test's own (a tmpfs) that
fills up under load: every send is either acknowledged or refused with the
retryable error (503 UNAVAILABLE), the server stays up, every acknowledged
task is there once space is freed and after a restart, and the server takes
writes again by itself."""

from __future__ import annotations

import asyncio
import os
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tests.processes import reap, start_server

HEADERS = {"A2A-Version": "1.0"}
SIZE_MB = 8


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[Path]:
    where = tmp_path / "disk"
    where.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={SIZE_MB}m", "tmpfs",
                              str(where)], capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here (needs root): {mounted.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def message(text: str) -> dict[str, Any]:
    return {"message": {"messageId": uuid.uuid4().hex, "role": "ROLE_USER",
                        "parts": [{"text": text}]}}


async def send(http: aiohttp.ClientSession, base: str) -> tuple[int, dict[str, Any]]:
    async with http.post(base + "/message:send", json=message("x" * 2000)) as resp:
        return resp.status, await resp.json()


async def test_a_full_disk_refuses_retryably_and_loses_nothing(disk: Path) -> None:
    ballast = disk / "ballast"
    server = await start_server("serve", "--store", f"sqlite:///{disk / 'tasks.db'}",
                                "--grace", "0")
    acked: list[str] = []
    refused: list[dict[str, Any]] = []
    try:
        async with aiohttp.ClientSession(headers=HEADERS) as http:
            # All but ~1 MB of the filesystem taken by something else.
            free = os.statvfs(disk).f_bavail * os.statvfs(disk).f_frsize
            ballast.write_bytes(b"\0" * max(free - 1024 * 1024, 0))

            async def writer() -> None:
                while len(refused) < 40:
                    status, body = await send(http, server.url)
                    if status == 200:
                        acked.append(body["task"]["id"])
                    else:
                        assert status == 503, body  # nothing but the retryable refusal
                        refused.append(body)

            await asyncio.wait_for(asyncio.gather(*(writer() for _ in range(4))), 120)
            assert server.proc.poll() is None  # still up
            reasons = {b["error"]["details"][0]["reason"] for b in refused}
            assert reasons == {"UNAVAILABLE"}, reasons
            ballast.unlink()  # space freed: the server takes writes again, by itself
            deadline = time.monotonic() + 30
            while (status := (await send(http, server.url))[0]) != 200:
                assert status == 503 and time.monotonic() < deadline
                await asyncio.sleep(0.1)
            for task_id in acked:
                async with http.get(f"{server.url}/tasks/{task_id}") as resp:
                    assert resp.status == 200, task_id
    finally:
        reap(server.proc)
    assert len(acked) > 10
    again = await start_server("serve", "--store", f"sqlite:///{disk / 'tasks.db'}")
    try:
        async with aiohttp.ClientSession(headers=HEADERS) as http:
            for task_id in acked:
                async with http.get(f"{again.url}/tasks/{task_id}") as resp:
                    assert resp.status == 200, task_id
                    assert (await resp.json())["status"]["state"] == "TASK_STATE_COMPLETED"
    finally:
        reap(again.proc)
