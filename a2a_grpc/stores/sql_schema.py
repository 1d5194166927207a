"""The schema of the SQL stores: each migration moves it up one version.

- a2a_tasks: one row per task with what ListTasks filters and sorts on
  (its `body` is unused since version 5), the lease of the replica that
  last wrote it (`holder`, `lease_ns`) and its `epoch` (fence.py);
- a2a_snapshots: the task as of event `seq`, rewritten now and then;
- a2a_events: every event of every task, under its sequence number (a row
  holds the `n` events up to `seq` that one batch wrote);
- a2a_messages: user messageIds (idempotent sends); a2a_counts: tasks per
  (tenant, owner, state); a2a_push_configs and a2a_outbox: webhooks;
- a2a_cards: the served card's digest and since when (Last-Modified);
- a2a_contexts: what an agent keeps of a conversation (context_state).
"""

from __future__ import annotations

import logging

from a2a_grpc.stores.sql_batch import Tx

log = logging.getLogger("a2a_grpc.store")

# Each entry moves the schema up one version; never edit a released entry.
MIGRATIONS: list[list[str | tuple[str, str]]] = [
    [
        """CREATE TABLE a2a_tasks (
            tenant TEXT NOT NULL, owner TEXT NOT NULL, id TEXT NOT NULL,
            context_id TEXT NOT NULL, state INTEGER NOT NULL, status_ns BIGINT NOT NULL,
            seq BIGINT NOT NULL, body {blob} NOT NULL,
            PRIMARY KEY (tenant, id))""",
        "CREATE INDEX a2a_tasks_recent ON a2a_tasks (tenant, owner, status_ns DESC, id DESC)",
        """CREATE INDEX a2a_tasks_context
            ON a2a_tasks (tenant, owner, context_id, status_ns DESC, id DESC)""",
        """CREATE INDEX a2a_tasks_state
            ON a2a_tasks (tenant, owner, state, status_ns DESC, id DESC)""",
        "CREATE INDEX a2a_tasks_unsettled ON a2a_tasks (state)",
        """CREATE TABLE a2a_events (
            tenant TEXT NOT NULL, task_id TEXT NOT NULL, seq BIGINT NOT NULL,
            body {blob} NOT NULL, PRIMARY KEY (tenant, task_id, seq))""",
        """CREATE TABLE a2a_messages (
            tenant TEXT NOT NULL, owner TEXT NOT NULL, message_id TEXT NOT NULL,
            task_id TEXT NOT NULL, PRIMARY KEY (tenant, owner, message_id))""",
        "CREATE INDEX a2a_messages_task ON a2a_messages (tenant, task_id)",
        """CREATE TABLE a2a_push_configs (
            tenant TEXT NOT NULL, task_id TEXT NOT NULL, id TEXT NOT NULL,
            created BIGINT NOT NULL, body {blob} NOT NULL, PRIMARY KEY (tenant, task_id, id))""",
        """CREATE TABLE a2a_counts (
            tenant TEXT NOT NULL, owner TEXT NOT NULL, state INTEGER NOT NULL,
            n BIGINT NOT NULL, PRIMARY KEY (tenant, owner, state))""",
    ],
    [  # 2: the push notification outbox
        """CREATE TABLE a2a_outbox (
            id {serial}, tenant TEXT NOT NULL, owner TEXT NOT NULL, task_id TEXT NOT NULL,
            config_id TEXT NOT NULL, seq BIGINT NOT NULL, attempts INTEGER NOT NULL,
            next_ns BIGINT NOT NULL, dead INTEGER NOT NULL, last_error TEXT NOT NULL)""",
        "CREATE INDEX a2a_outbox_due ON a2a_outbox (dead, next_ns)",
        "CREATE INDEX a2a_outbox_head ON a2a_outbox (tenant, task_id, config_id, dead, seq)",
    ],
    [  # 3: tasks an agent handed off on purpose (crash recovery leaves them be)
        "ALTER TABLE a2a_tasks ADD COLUMN handed_off INTEGER NOT NULL DEFAULT 0",
    ],
    [  # 4: what a config's notifications carry ("" the 1.0 event; "0.3"/"0.1" a task)
        "ALTER TABLE a2a_push_configs ADD COLUMN payload TEXT NOT NULL DEFAULT ''",
    ],
    [  # 5: snapshots in a table of their own, so an event no longer rewrites the
        # task's row (SQLite rewrites a whole row, blob included, on any update)
        """CREATE TABLE a2a_snapshots (
            tenant TEXT NOT NULL, task_id TEXT NOT NULL, seq BIGINT NOT NULL,
            body {blob} NOT NULL, PRIMARY KEY (tenant, task_id))""",
        "INSERT INTO a2a_snapshots (tenant, task_id, seq, body) "
        "SELECT tenant, id, seq, body FROM a2a_tasks",
        "UPDATE a2a_tasks SET body = CAST('' AS {blob})",
        # A row of the log holds the `n` events of a task that ended at `seq`,
        # written in one batch (framed: sql_batch.frames); n = 1: the event.
        "ALTER TABLE a2a_events ADD COLUMN n INTEGER NOT NULL DEFAULT 1",
        # SQLite: the messageIds rebuilt WITHOUT ROWID, keyed by their primary key
        # alone (a rowid table is two B-trees: a row and its key). Not the log nor
        # the snapshots: their rows are large, which WITHOUT ROWID stores badly
        # (docs/benchmarks.md).
        ("sqlite", """CREATE TABLE a2a_messages_5 (
            tenant TEXT NOT NULL, owner TEXT NOT NULL, message_id TEXT NOT NULL,
            task_id TEXT NOT NULL, PRIMARY KEY (tenant, owner, message_id)) WITHOUT ROWID"""),
        ("sqlite", "INSERT INTO a2a_messages_5 SELECT tenant, owner, message_id, task_id "
                   "FROM a2a_messages"),
        ("sqlite", "DROP TABLE a2a_messages"),  # and its index
        ("sqlite", "ALTER TABLE a2a_messages_5 RENAME TO a2a_messages"),
        ("sqlite", "CREATE INDEX a2a_messages_task ON a2a_messages (tenant, task_id)"),
    ],
    [  # 6: leases: which replica runs a task, until when (renewed while it lives)
        "ALTER TABLE a2a_tasks ADD COLUMN holder TEXT NOT NULL DEFAULT ''",
        "ALTER TABLE a2a_tasks ADD COLUMN lease_ns BIGINT NOT NULL DEFAULT 0",
    ],
    [  # 7: the fence: moved on by each takeover; a writer from before it is refused
        "ALTER TABLE a2a_tasks ADD COLUMN epoch BIGINT NOT NULL DEFAULT 0",
    ],
    [  # 8: the card's digest and when it was first served (its Last-Modified, the
        # same on every replica)
        """CREATE TABLE a2a_cards (
            name TEXT NOT NULL PRIMARY KEY, digest TEXT NOT NULL, since_ns BIGINT NOT NULL)""",
    ],
    [  # 9: what an agent keeps of a conversation (its contextId), by name
        # (framework adapters: a Pydantic AI agent's message history)
        """CREATE TABLE a2a_contexts (
            tenant TEXT NOT NULL, owner TEXT NOT NULL, context_id TEXT NOT NULL,
            name TEXT NOT NULL, body {blob} NOT NULL,
            PRIMARY KEY (tenant, owner, context_id, name))""",
    ],
]
SCHEMA_VERSION = len(MIGRATIONS)


async def migrate(tx: Tx, dialect: str, blob: str, serial: str) -> None:
    """Up to SCHEMA_VERSION; a (dialect, sql) statement runs on that dialect only."""
    await tx.execute("CREATE TABLE IF NOT EXISTS a2a_schema (version INTEGER NOT NULL)")
    rows = await tx.fetch("SELECT version FROM a2a_schema")
    version = int(rows[0][0]) if rows else 0
    if version > SCHEMA_VERSION:
        raise RuntimeError(
            f"the task store has schema version {version}, newer than this a2a-grpc "
            f"understands ({SCHEMA_VERSION}): upgrade a2a-grpc or use another store")
    for number in range(version, SCHEMA_VERSION):
        for statement in MIGRATIONS[number]:
            if isinstance(statement, tuple):
                if statement[0] != dialect:
                    continue
                statement = statement[1]
            await tx.execute(statement.format(blob=blob, serial=serial))
        log.info("task store schema migrated to version %d", number + 1)
    if not rows:
        await tx.execute("INSERT INTO a2a_schema (version) VALUES (?)", SCHEMA_VERSION)
    elif version != SCHEMA_VERSION:
        await tx.execute("UPDATE a2a_schema SET version = ?", SCHEMA_VERSION)
