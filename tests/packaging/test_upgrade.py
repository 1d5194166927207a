"""A rolling upgrade: the previous release (the last commit with store
schema 8, built into a wheel and installed in a virtualenv of its own) and
this one (schema 9) on one SQLite file and on one PostgreSQL schema. This
one migrates under the old one, which keeps serving; restarted, the old one
stops with a clear "schema 9 is newer" and touches nothing; a migration
killed halfway (inside its transaction, waiting on the migration lock) leaves
the store as it was, and the next start finishes it. docs/replicas.md
says how to upgrade."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import tarfile
import uuid
from collections.abc import AsyncIterator
from io import BytesIO
from pathlib import Path
from typing import Any

import aiohttp
import asyncpg
import pytest

from a2a_grpc.stores.postgres import MIGRATION_LOCK
from a2a_grpc.stores.sql_schema import SCHEMA_VERSION
from tests.processes import Server, reap, start_server
from tests.stores import drop_schema, postgres_schema, postgres_url
from tools.kits import INTEROP, one_maker, venv_with

ROOT = Path(__file__).resolve().parents[2]
# The commit before the one that added schema 9 (a2a_contexts): the previous release.
PREVIOUS = "829d8b7^"
HEADERS = {"A2A-Version": "1.0"}


@pytest.fixture(scope="session")
def previous() -> Path:
    """Python of a virtualenv holding a2a-grpc as it was at PREVIOUS."""
    found = subprocess.run(["git", "rev-parse", PREVIOUS], cwd=ROOT, capture_output=True,
                           text=True, check=False)
    if found.returncode != 0:  # a shallow clone: the test needs the history to build it
        pytest.skip(f"the previous release ({PREVIOUS}) is not in this clone's history "
                    f"({found.stderr.strip()}): `git fetch --unshallow`, or clone without "
                    "--depth")
    commit = found.stdout.strip()
    home = INTEROP / f"previous-{commit[:10]}"
    wheels = home / "dist"
    with one_maker(home.name):  # one pytest-xdist worker builds it
        if not list(wheels.glob("*.whl")):
            source = home / "src"
            archive = subprocess.run(["git", "archive", commit], cwd=ROOT, capture_output=True,
                                     check=True).stdout
            with tarfile.open(fileobj=BytesIO(archive)) as tar:
                tar.extractall(source, filter="fully_trusted")
            subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w",
                            str(wheels), str(source)], check=True, capture_output=True,
                           cwd=home)
    wheel = next(wheels.glob("*.whl"))
    return venv_with(f"previous-{commit[:10]}-venv", [f"{wheel}[postgres]"])


def message(text: str = "hello") -> dict[str, Any]:
    return {"message": {"messageId": uuid.uuid4().hex, "role": "ROLE_USER",
                        "parts": [{"text": text}]}}


async def sends(http: aiohttp.ClientSession, server: Server) -> str:
    async with http.post(server.url + "/message:send", json=message()) as resp:
        body = await resp.json()
        assert resp.status == 200, body
    return str(body["task"]["id"])


async def reads(http: aiohttp.ClientSession, server: Server, task_id: str) -> None:
    async with http.get(f"{server.url}/tasks/{task_id}") as resp:
        assert resp.status == 200, await resp.text()


def old_serve(previous: Path) -> tuple[str, ...]:
    return (str(previous), "-m", "a2a_grpc")


@pytest.fixture
async def postgres() -> AsyncIterator[str]:
    schema = await postgres_schema()
    try:
        yield schema
    finally:
        await drop_schema(schema)


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
async def test_the_new_release_migrates_under_the_old_one(
        previous: Path, tmp_path: Path, kind: str) -> None:
    schema = await postgres_schema() if kind == "postgresql" else ""
    store = postgres_url(schema) if schema else f"sqlite:///{tmp_path / 'tasks.db'}"
    # The old release, from a folder of its own (not this checkout), creates the store.
    old = await start_server("serve", "--store", store, program=old_serve(previous),
                             cwd=tmp_path)
    new = None
    try:
        async with aiohttp.ClientSession(headers=HEADERS) as http:
            before = await sends(http, old)
            new = await start_server("serve", "--store", store)
            assert f"migrated to version {SCHEMA_VERSION}" in new.log()
            # The old one keeps serving, and both see each other's tasks.
            during = await sends(http, old)
            for server in (old, new):
                for task_id in (before, during):
                    await reads(http, server, task_id)
            after = await sends(http, new)
            await reads(http, old, after)
        reap(old.proc)
        # Restarted, the old one stops, saying why, and changes nothing.
        again = await asyncio.to_thread(
            subprocess.run, [*old_serve(previous), "serve", "--store", store, "--http-port",
                             "0", "--grpc-port", "0"],
            cwd=tmp_path, capture_output=True, text=True, timeout=60)
        assert again.returncode == 1
        assert (f"schema version {SCHEMA_VERSION}, newer than this a2a-grpc understands "
                f"({SCHEMA_VERSION - 1})") in again.stderr, again.stderr
        async with aiohttp.ClientSession(headers=HEADERS) as http:
            await reads(http, new, before)
            await sends(http, new)
    finally:
        reap(old.proc)
        if new is not None:
            reap(new.proc)
        if schema:
            await drop_schema(schema)


async def test_a_migration_killed_halfway_is_finished_by_the_next_start(
        previous: Path, tmp_path: Path, postgres: str) -> None:
    store = postgres_url(postgres)
    old = await start_server("serve", "--store", store, program=old_serve(previous),
                             cwd=tmp_path)
    async with aiohttp.ClientSession(headers=HEADERS) as http:
        kept = await sends(http, old)
    reap(old.proc)
    # Hold the migration lock: the new release's start waits for it inside its
    # migration's transaction, and is killed there.
    holder = await asyncpg.connect(store.split("?")[0])
    try:
        await holder.execute("BEGIN")
        await holder.execute("SELECT pg_advisory_xact_lock($1)", MIGRATION_LOCK)
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "a2a_grpc", "serve", "--store", store, "--http-port", "0",
            "--grpc-port", "0", cwd=ROOT, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        try:
            await waiting_on_lock(holder)
        finally:
            proc.kill()
            await proc.wait()
        await holder.execute("ROLLBACK")
        version = await holder.fetchval(f'SELECT version FROM "{postgres}".a2a_schema')
        assert version == SCHEMA_VERSION - 1  # nothing of the killed migration stayed
    finally:
        await holder.close()
    new = await start_server("serve", "--store", store)
    try:
        assert f"migrated to version {SCHEMA_VERSION}" in new.log()
        async with aiohttp.ClientSession(headers=HEADERS) as http:
            await reads(http, new, kept)
            await sends(http, new)
    finally:
        reap(new.proc)


async def waiting_on_lock(conn: asyncpg.Connection) -> None:
    """Until another session waits for an advisory lock (the migration's)."""
    for _ in range(600):
        waiting = await conn.fetchval(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted")
        if waiting:
            return
        await asyncio.sleep(0.05)
    raise AssertionError("the new release never waited for the migration lock")
