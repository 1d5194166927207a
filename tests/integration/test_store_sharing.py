"""Who may serve one store at once, on real `serve` processes: a server
without a bus is the only one on its store (at start-up it ends the runs it
finds unfinished, taking them for its last life's); replicas, each on the
bus, share it. A second server that would break that stops before it
touches a task, saying what to do; the first one runs on, its task intact.
On the SQLite default and on PostgreSQL (per schema)."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from a2a_grpc.stores.pg_serving import SERVING_LOCK
from tests.integration.test_replicas import HEADERS, start_task, state_of
from tests.processes import Server, mounted_app, reap, spawn, start_server
from tests.redis_bus import bus_url, drop_prefix, redis_prefix
from tests.stores import POSTGRES, drop_schema, durable_store_url, postgres_schema, postgres_url


@pytest.fixture(params=["sqlite", "postgres"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    async with durable_store_url(request.param, tmp_path) as url:
        yield url


@pytest.fixture
async def servers() -> AsyncIterator[list[Server]]:
    started: list[Server] = []
    yield started
    for server in started:
        reap(server.proc)


async def refused(*args: str) -> str:
    """`serve ARGS` that must stop at start: exit code 1, and what it said."""
    proc = spawn("serve", "--grpc-port", "0", "--http-port", "0", *args)
    try:
        out, _ = await asyncio.to_thread(proc.communicate, timeout=30)
    finally:
        reap(proc)
    assert proc.returncode == 1, out
    return out


async def test_a_second_server_without_a_bus_is_refused(
        store: str, servers: list[Server]) -> None:
    first = await start_server("serve", "--store", store)
    servers.append(first)
    async with aiohttp.ClientSession(headers=HEADERS) as http:
        task_id = await start_task(http, first, "slow 3")
        said = await refused("--store", store)
        assert "another a2a-grpc server is serving" in said and "--bus" in said
        assert "marked FAILED" not in said  # stopped before it recovered a task
        # the first one's run went on, untouched, to its end
        for _ in range(200):
            if (await state_of(http, first, task_id))["state"] == "TASK_STATE_COMPLETED":
                break
            await asyncio.sleep(0.05)
        else:
            raise AssertionError("the first server's task did not complete")


async def test_a_replica_beside_a_server_without_a_bus_is_refused_and_the_other_way(
        store: str, servers: list[Server]) -> None:
    prefix = await redis_prefix()
    try:
        alone = await start_server("serve", "--store", store)
        servers.append(alone)
        said = await refused("--store", store, "--bus", bus_url(prefix))
        assert "without --bus (alone, or `serve --workers` on its own hub) is serving" in said
        assert await alone.stop() == 0
        servers.append(await start_server("serve", "--store", store, "--bus", bus_url(prefix)))
        servers.append(await start_server("serve", "--store", store, "--bus", bus_url(prefix)))
        assert "another a2a-grpc server is serving" in await refused("--store", store)
    finally:
        await drop_prefix(prefix)


async def test_the_store_is_free_again_once_its_server_is_killed(
        store: str, servers: list[Server]) -> None:
    first = await start_server("serve", "--store", store)
    servers.append(first)
    first.proc.send_signal(signal.SIGKILL)
    first.proc.wait()
    servers.append(await start_server("serve", "--store", store))


async def test_workers_on_their_hub_are_one_server_alone_on_the_store(
        tmp_path: Path, servers: list[Server]) -> None:
    """`serve --workers` on its supervisor's hub is one server: alone on its
    store (another group of workers would be on another hub, and a replica on
    Redis on no hub at all); it is refused beside a server without a bus."""
    url = f"sqlite:///{tmp_path / 'tasks.db'}"
    servers.append(await start_server("serve", "--store", url, "--workers", "2"))
    assert "another a2a-grpc server is serving" in await refused("--store", url)
    assert "another a2a-grpc server is serving" in await refused("--store", url,
                                                                 "--workers", "2")
    prefix = await redis_prefix()
    try:
        said = await refused("--store", url, "--bus", bus_url(prefix))
    finally:
        await drop_prefix(prefix)
    assert "on its own hub" in said
    other = f"sqlite:///{tmp_path / 'other.db'}"
    servers.append(await start_server("serve", "--store", other))
    said = await refused("--store", other, "--workers", "2")
    assert "another a2a-grpc server is serving" in said


async def test_a_second_copy_of_the_mounted_app_without_a_bus_fails_its_start_up(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, servers: list[Server]) -> None:
    """What `uvicorn --workers 2` without A2A_GRPC_BUS would do: two copies of
    the FastAPI app of examples/mount_fastapi.py on one SQLite file."""
    servers.append(await mounted_app(tmp_path, monkeypatch))
    with pytest.raises(AssertionError, match="another a2a-grpc server is serving"):
        await mounted_app(tmp_path, monkeypatch)


async def test_servers_on_two_schemas_of_one_database_are_apart(
        servers: list[Server], tmp_path: Path) -> None:
    async with durable_store_url("postgres", tmp_path) as one, \
            durable_store_url("postgres", tmp_path) as two:
        servers.append(await start_server("serve", "--store", one))
        servers.append(await start_server("serve", "--store", two))
        for server in servers:
            reap(server.proc)


async def test_a_place_lost_on_postgres_is_taken_again(servers: list[Server]) -> None:
    """The connection holding a server's place on PostgreSQL ends under it (as
    when PostgreSQL restarts): the server takes its place again, so a second
    server started after that is still refused."""
    import asyncpg

    schema = await postgres_schema()
    try:
        first = await start_server("serve", "--store", postgres_url(schema))
        servers.append(first)
        admin = await asyncpg.connect(POSTGRES, timeout=5)
        try:
            holders = await admin.fetch(
                "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND classid = $1 "
                "AND objsubid = 2 AND objid::bigint = (hashtext($2)::bigint & 4294967295)",
                SERVING_LOCK, schema)
            assert len(holders) == 1, holders
            assert await admin.fetchval("SELECT pg_terminate_backend($1)", holders[0]["pid"])
            await first.logged("is held again")
        finally:
            await admin.close()
        assert "another a2a-grpc server is serving" in await refused("--store",
                                                                     postgres_url(schema))
        reap(first.proc)
    finally:
        await drop_schema(schema)


async def test_a_schema_that_is_not_there_yet_is_made(servers: list[Server]) -> None:
    """`--store postgresql://...?search_path=S` with no schema S: S is made,
    and tasks go into it (not "no schema has been selected to create in")."""
    import asyncpg

    schema = await postgres_schema()
    await drop_schema(schema)  # a name nothing uses
    try:
        server = await start_server("serve", "--store", postgres_url(schema))
        servers.append(server)
        async with aiohttp.ClientSession(headers=HEADERS) as http:
            task_id = await start_task(http, server, "hello")
            for _ in range(200):  # returnImmediately: until the run ends
                if (await state_of(http, server, task_id))["state"] == "TASK_STATE_COMPLETED":
                    break
                await asyncio.sleep(0.05)
        conn = await asyncpg.connect(POSTGRES, timeout=5)
        try:
            assert await conn.fetchval(f"SELECT count(*) FROM {schema}.a2a_tasks") == 1
        finally:
            await conn.close()
        reap(server.proc)
    finally:
        await drop_schema(schema)
