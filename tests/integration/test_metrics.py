"""Metrics: a scripted run over every binding, then /metrics scraped and
parsed with prometheus_client's own parser, showing the exact counts of
that run. And `serve --metrics-port`, `--log-format json` in a real process."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import aiohttp
import pytest
from prometheus_client.parser import text_string_to_metric_families

from a2a_grpc.client import A2AClient, ClientOptions
from a2a_grpc.core.errors import TaskNotCancelableError, TaskNotFoundError
from a2a_grpc.generated import a2a_pb2 as pb
from a2a_grpc.observe.metrics import Metrics
from a2a_grpc.stores import Scope
from a2a_grpc.stores.sqlite import SqliteTaskStore
from tests.carried import carriers
from tests.conftest import StackFactory
from tests.processes import reap, start_server
from tests.webhook import start_webhook

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def parse(text: str) -> Samples:
    return {(s.name, frozenset(s.labels.items())): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


async def scrape(url: str) -> Samples:
    async with aiohttp.ClientSession() as session, session.get(url + "/metrics") as resp:
        assert resp.status == 200
        assert resp.headers["Content-Type"].startswith("text/plain")
        return parse(await resp.text())


def client(card: pb.AgentCard, binding: str) -> A2AClient:
    return A2AClient.from_card(card, ClientOptions(prefer=[binding]))


async def test_a_scripted_run_shows_its_exact_counts(stack: StackFactory, tmp_path: Path) -> None:
    store = SqliteTaskStore(tmp_path / "tasks.db")
    await store.open()
    hook = await start_webhook()
    hook.answer("/h", 503)  # the first notification is retried once
    try:
        s = await stack(store=store, sender=True, metrics=Metrics())
        card = s.card()
        tasks: list[str] = []
        async with client(card, "GRPC") as grpc_client:
            for _ in range(3):
                tasks.append((await grpc_client.send_text("hello")).task.id)
            with pytest.raises(TaskNotCancelableError):
                await grpc_client.cancel_task(pb.CancelTaskRequest(id=tasks[0]))
        async with client(card, "JSONRPC") as jsonrpc:
            for _ in range(2):
                tasks.append((await jsonrpc.send_text("hello")).task.id)
            with pytest.raises(TaskNotFoundError):
                await jsonrpc.get_task(pb.GetTaskRequest(id="no-such-task"))
        async with client(card, "HTTP+JSON") as rest:
            await rest.get_task(pb.GetTaskRequest(id=tasks[0]))
            await rest.list_tasks(pb.ListTasksRequest())
            streamed = [e async for e in rest.stream_text("stream 5")]
            tasks.append(streamed[0].task.id)
            config = pb.TaskPushNotificationConfig(url=hook.url("/h"))
            pushed = await rest.send_message(pb.SendMessageRequest(
                message=pb.Message(message_id="p1", role=pb.ROLE_USER,
                                   parts=[pb.Part(text="hello")]),
                configuration=pb.SendMessageConfiguration(task_push_notification_config=config)))
            tasks.append(pushed.task.id)
        stored = [await store.get(Scope("", ""), t) for t in tasks]
        events = sum(t.seq for t in stored if t is not None)
        async with asyncio.timeout(10), hook.arrived:  # until the last event was delivered
            await hook.arrived.wait_for(lambda: any(
                h.event.status_update.status.state == pb.TASK_STATE_COMPLETED
                for h in hook.hits))
        notifications = len({h.headers["Idempotency-Key"] for h in hook.hits})
        assert len(hook.hits) == notifications + 1  # one of them was sent twice
        for _ in range(200):  # the stream's end reaches the server after its last event
            samples = await scrape(s.base_url)
            if (not value(samples, "a2a_open_streams", method="SendStreamingMessage",
                          binding="rest")
                    and value(samples, "a2a_push_notifications_total", outcome="delivered")
                    == notifications):
                break
            await asyncio.sleep(0.02)
    finally:
        await hook.server.close()

    def requests(method: str, binding: str, outcome: str = "ok") -> float:
        return value(samples, "a2a_requests_total", method=method, binding=binding,
                     outcome=outcome)

    assert requests("SendMessage", "grpc") == 3
    assert requests("CancelTask", "grpc", "TASK_NOT_CANCELABLE") == 1
    assert requests("SendMessage", "jsonrpc") == 2
    assert requests("GetTask", "jsonrpc", "TASK_NOT_FOUND") == 1
    assert requests("GetTask", "rest") == 1
    assert requests("ListTasks", "rest") == 1
    assert requests("SendStreamingMessage", "rest") == 1
    assert requests("SendMessage", "rest") == 1
    answered = sum(v for (name, _), v in samples.items() if name == "a2a_requests_total")
    assert answered == 3 + 1 + 2 + 1 + 1 + 1 + 1 + 1
    assert value(samples, "a2a_request_duration_seconds_count", method="SendMessage",
                 binding="grpc") == 3
    assert value(samples, "a2a_open_streams", method="SendStreamingMessage",
                 binding="rest") == 0
    assert value(samples, "a2a_stream_events_total", method="SendStreamingMessage",
                 binding="rest") == len(streamed)
    assert value(samples, "a2a_events_published_total") == events
    assert value(samples, "a2a_tasks", state="completed") == len(tasks) == 7
    assert value(samples, "a2a_tasks", state="working") == 0
    assert value(samples, "a2a_agent_runs") == 0
    assert value(samples, "a2a_stream_backlog_events") == 0
    assert value(samples, "a2a_push_notifications_total", outcome="delivered") == notifications
    assert value(samples, "a2a_push_notifications_total", outcome="retried") == 1
    assert value(samples, "a2a_push_notifications_total", outcome="dead") == 0
    assert value(samples, "a2a_store_seconds_count", op="commit") > 0
    assert value(samples, "a2a_store_seconds_count", op="read") > 0


@pytest.mark.parametrize("carrier", carriers())
async def test_metrics_port_and_json_logs_in_a_real_server(carrier: str) -> None:
    server = await start_server("serve", "--store", "memory", "--metrics-port", "0",
                                "--log-format", "json", "--grace", "0",
                                "--grpc-carrier", carrier)
    try:
        found = re.search(r"metrics on \S+:(\d+)", server.log())
        assert found, server.log()
        metrics_url = f"http://127.0.0.1:{found.group(1)}"
        async with client(pb.AgentCard(supported_interfaces=[pb.AgentInterface(
                url=server.target, protocol_binding="GRPC", protocol_version="1.0")]),
                "GRPC") as grpc_client:
            await grpc_client.send_text("hello")
        samples = await scrape(metrics_url)
        assert value(samples, "a2a_requests_total", method="SendMessage", binding="grpc",
                     outcome="ok") == 1
        assert value(samples, "a2a_tasks", state="completed") == 1
        async with aiohttp.ClientSession() as session:
            async with session.get(metrics_url + "/readyz") as resp:
                assert resp.status == 200 and (await resp.json())["ready"] is True
            async with session.get(metrics_url + "/.well-known/agent-card.json") as resp:
                assert resp.status == 404  # only operations live on that port
    finally:
        code = await server.stop()
        log = server.log()
        reap(server.proc)
    assert code == 0, log
    lines = [line for line in log.splitlines() if line.strip()]
    assert lines, log
    records = [json.loads(line) for line in lines]  # every line is a JSON object
    assert all({"time", "level", "logger", "message"} <= r.keys() for r in records)
    assert any(r["message"].startswith("listening:") for r in records)
