"""The durable stores look a task up by its key, however young the table.

A GetTask used to name the owner in its WHERE clause too; on a table whose
statistics were not gathered yet (any new deployment's first minutes),
PostgreSQL then scanned all of the owner's entries of a2a_tasks_state, so a
read cost more with every task stored. The plan is checked, not timed.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import asyncpg

from a2a_grpc.stores.postgres import PostgresTaskStore, numbered
from a2a_grpc.stores.sql_reads import GET_TASK
from a2a_grpc.stores.sqlite import SqliteTaskStore
from tests.stores import drop_schema, postgres_schema, postgres_url

TASKS = 5000
FILL = [
    "INSERT INTO a2a_tasks (tenant, owner, id, context_id, state, status_ns, seq, body) "
    "SELECT '', 'alice', 'task-' || i, 'ctx-' || (i % 50), 3, i, 1, '' FROM {series}",
    "INSERT INTO a2a_snapshots (tenant, task_id, seq, body) "
    "SELECT '', 'task-' || i, 1, '' FROM {series}",
]
PG_SERIES = f"generate_series(1, {TASKS}) AS s (i)"
SQLITE_SERIES = (f"(WITH RECURSIVE s (i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s "
                 f"WHERE i < {TASKS}) SELECT i FROM s)")


def _indexes(plan: dict[str, Any]) -> set[str]:
    found = {str(plan["Index Name"])} if "Index Name" in plan else set()
    for child in plan.get("Plans", []):
        found |= _indexes(child)
    return found


async def test_postgres_reads_a_task_by_its_key() -> None:
    schema = await postgres_schema()
    try:
        store = PostgresTaskStore(postgres_url(schema))
        await store.open()
        await store.close()
        conn = await asyncpg.connect(postgres_url(schema))
        try:
            for sql in FILL:
                await conn.execute(sql.format(series=PG_SERIES))
            rows = await conn.fetch(f"EXPLAIN (FORMAT JSON) {numbered(GET_TASK)}", "", "task-77")
            plan = json.loads(rows[0][0])[0]["Plan"]
        finally:
            await conn.close()
        assert _indexes(plan) == {"a2a_tasks_pkey", "a2a_snapshots_pkey"}, plan
    finally:
        await drop_schema(schema)


async def test_sqlite_reads_a_task_by_its_key(tmp_path: Path) -> None:
    store = SqliteTaskStore(tmp_path / "plans.db")
    await store.open()
    await store.close()

    conn = sqlite3.connect(tmp_path / "plans.db")
    try:
        for sql in FILL:
            conn.execute(sql.format(series=SQLITE_SERIES))
        conn.commit()
        plan = [str(r[3]) for r in conn.execute(f"EXPLAIN QUERY PLAN {GET_TASK}", ("", "task-77"))]
    finally:
        conn.close()
    # A primary key is an automatic index unless the table is WITHOUT ROWID.
    assert plan == [
        "SEARCH t USING INDEX sqlite_autoindex_a2a_tasks_1 (tenant=? AND id=?)",
        "SEARCH s USING INDEX sqlite_autoindex_a2a_snapshots_1 (tenant=? AND task_id=?)"]
