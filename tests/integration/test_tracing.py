"""Traces, with OpenTelemetry's SDK and a real in-memory span exporter: one
trace from a client, through our server and its agent, to a second agent
server the agent calls, on each binding; push notifications carry it on."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import ALWAYS_OFF
from opentelemetry.trace import SpanKind, StatusCode

from a2a_grpc.agent import RequestContext, TaskEvents
from a2a_grpc.client import A2AClient, ClientOptions
from a2a_grpc.demos.demo import DemoAgent
from a2a_grpc.generated import a2a_pb2 as pb
from a2a_grpc.observe import tracing
from tests.conftest import StackFactory
from tests.webhook import start_webhook

BINDINGS = {"grpc": "GRPC", "jsonrpc": "JSONRPC", "rest": "HTTP+JSON"}
SEND = "lf.a2a.v1.A2AService/SendMessage"


@pytest.fixture
def provider() -> Iterator[tuple[TracerProvider, InMemorySpanExporter]]:
    exporter = InMemorySpanExporter()
    made = TracerProvider()
    made.add_span_processor(SimpleSpanProcessor(exporter))
    tracing.install(made)
    yield made, exporter
    tracing.install(None)
    made.shutdown()


class Relay(DemoAgent):
    """Asks a second agent (`target`, over `binding`) and completes with its answer."""

    def __init__(self, binding: str) -> None:
        super().__init__()
        self.binding = binding
        self.target: pb.AgentCard | None = None

    async def execute(self, context: RequestContext, events: TaskEvents) -> None:
        assert self.target is not None
        async with A2AClient.from_card(self.target, ClientOptions(prefer=[self.binding])) as b:
            answer = await b.send_text(context.text)
        await events.working()
        await events.artifact(f"relayed: {answer.task.artifacts[0].parts[0].text}")
        await events.complete()


def attrs(span: ReadableSpan) -> Mapping[str, Any]:
    return span.attributes or {}


def by_id(spans: tuple[ReadableSpan, ...]) -> dict[int, ReadableSpan]:
    return {s.context.span_id: s for s in spans}


def parent_of(span: ReadableSpan, spans: tuple[ReadableSpan, ...]) -> ReadableSpan:
    assert span.parent is not None, f"{span.name} has no parent"
    return by_id(spans)[span.parent.span_id]


@pytest.mark.parametrize("binding", list(BINDINGS))
async def test_one_trace_from_client_through_agent_to_a_second_agent(
        stack: StackFactory, provider: tuple[TracerProvider, InMemorySpanExporter],
        binding: str) -> None:
    made, exporter = provider
    second = await stack(observed=True)
    relay = Relay(BINDINGS[binding])
    relay.target = second.card()
    first = await stack(relay, observed=True)
    tracer = made.get_tracer("test")
    with tracer.start_as_current_span("caller") as root:
        async with A2AClient.from_card(first.card(),
                                       ClientOptions(prefer=[BINDINGS[binding]])) as client:
            reply = await client.send_text("hello")
    assert reply.task.status.state == pb.TASK_STATE_COMPLETED
    assert reply.task.artifacts[0].parts[0].text == "relayed: echo: hello"

    spans = exporter.get_finished_spans()
    assert {s.context.trace_id for s in spans} == {root.get_span_context().trace_id}
    servers = [s for s in spans if s.name == SEND]
    assert len(servers) == 2
    outer = next(s for s in servers if attrs(s)["a2a.task_id"] == reply.task.id)
    inner = next(s for s in servers if s is not outer)
    for s in servers:
        assert s.kind == SpanKind.SERVER
        assert attrs(s)["a2a.binding"] == binding
        assert attrs(s)["a2a.outcome"] == "ok"
        assert attrs(s)["rpc.method"] == "SendMessage"
    # caller -> our server (first) -> its agent -> the second server -> its agent
    assert parent_of(outer, spans).name == "caller"
    relay_run = next(s for s in spans if s.name == "a2a.agent.execute"
                     and attrs(s)["a2a.task_id"] == reply.task.id)
    assert parent_of(relay_run, spans) is outer
    assert parent_of(inner, spans) is relay_run
    second_run = next(s for s in spans if s.name == "a2a.agent.execute" and s is not relay_run)
    assert parent_of(second_run, spans) is inner
    assert attrs(second_run)["a2a.task_id"] == attrs(inner)["a2a.task_id"]


async def test_a_failed_call_is_an_error_span_with_its_reason(
        stack: StackFactory, provider: tuple[TracerProvider, InMemorySpanExporter]) -> None:
    _, exporter = provider
    s = await stack(observed=True)
    async with A2AClient.from_card(s.card(), ClientOptions(prefer=["JSONRPC"])) as client:
        with pytest.raises(Exception, match="not found"):
            await client.get_task(pb.GetTaskRequest(id="no-such-task"))
    span = next(x for x in exporter.get_finished_spans()
                if x.name == "lf.a2a.v1.A2AService/GetTask")
    assert span.parent is None  # the client had no trace: a new one starts here
    assert span.status.status_code == StatusCode.ERROR
    assert attrs(span)["a2a.error.reason"] == "TASK_NOT_FOUND"
    assert attrs(span)["a2a.task_id"] == "no-such-task"


async def test_a_stream_span_lasts_until_the_stream_ends(
        stack: StackFactory, provider: tuple[TracerProvider, InMemorySpanExporter]) -> None:
    _, exporter = provider
    s = await stack(observed=True)
    async with A2AClient.from_card(s.card(), ClientOptions(prefer=["GRPC"])) as client:
        events = [e async for e in client.stream_text("stream 5")]
    name = "lf.a2a.v1.A2AService/SendStreamingMessage"
    for _ in range(100):  # the server ends its span once it has sent the last event
        found = [x for x in exporter.get_finished_spans() if x.name == name]
        if found:
            break
        await asyncio.sleep(0.02)
    span = found[0]
    assert attrs(span)["a2a.stream.events"] == len(events)
    assert attrs(span)["a2a.task_id"] == events[0].task.id
    run = next(x for x in exporter.get_finished_spans() if x.name == "a2a.agent.execute")
    assert run.parent is not None and run.parent.span_id == span.context.span_id
    commits = [x for x in exporter.get_finished_spans() if x.name == "a2a.store.commit"]
    assert commits == [] or all(c.context.trace_id == span.context.trace_id for c in commits)


async def test_push_notifications_carry_the_trace_of_the_run(
        stack: StackFactory, provider: tuple[TracerProvider, InMemorySpanExporter]) -> None:
    made, exporter = provider
    hook = await start_webhook()
    try:
        s = await stack(sender=True, observed=True)
        config = pb.TaskPushNotificationConfig(url=hook.url("/h"), token="t")
        req = pb.SendMessageRequest(
            message=pb.Message(message_id="m1", role=pb.ROLE_USER,
                               parts=[pb.Part(text="hello")]),
            configuration=pb.SendMessageConfiguration(task_push_notification_config=config))
        with made.get_tracer("test").start_as_current_span("caller") as root:
            async with A2AClient.from_card(s.card(), ClientOptions(prefer=["GRPC"])) as client:
                reply = await client.send_message(req)
        await hook.wait_for("/h", 2)
    finally:
        await hook.server.close()
    spans = exporter.get_finished_spans()
    run = next(x for x in spans if x.name == "a2a.agent.execute")
    deliveries = {x.context.span_id: x for x in spans if x.name == "a2a.push.deliver"}
    trace_id = f"{root.get_span_context().trace_id:032x}"
    for hit in hook.hits:
        version, hit_trace, parent, _flags = hit.headers["traceparent"].split("-")
        assert (version, hit_trace) == ("00", trace_id)
        delivery = deliveries[int(parent, 16)]  # the delivery's own span
        assert delivery.kind == SpanKind.CLIENT
        assert attrs(delivery)["a2a.task_id"] == reply.task.id
        assert delivery.parent is not None and delivery.parent.span_id == run.context.span_id


async def test_no_tracer_installed_makes_no_spans_and_sends_no_traceparent(
        stack: StackFactory) -> None:
    assert tracing.tracer() is None
    hook = await start_webhook()
    try:
        s = await stack(sender=True, observed=True)
        config = pb.TaskPushNotificationConfig(url=hook.url("/h"))
        req = pb.SendMessageRequest(
            message=pb.Message(message_id="m1", role=pb.ROLE_USER, parts=[pb.Part(text="x")]),
            configuration=pb.SendMessageConfiguration(task_push_notification_config=config))
        async with A2AClient.from_card(s.card(), ClientOptions(prefer=["JSONRPC"])) as client:
            await client.send_message(req)
        await hook.wait_for("/h", 1)
    finally:
        await hook.server.close()
    assert all("traceparent" not in h.headers for h in hook.hits)


async def test_a_trace_not_sampled_records_nothing_anywhere(stack: StackFactory) -> None:
    exporter = InMemorySpanExporter()
    made = TracerProvider(sampler=ALWAYS_OFF)
    made.add_span_processor(SimpleSpanProcessor(exporter))
    tracing.install(made)
    try:
        second = await stack(observed=True)
        relay = Relay("JSONRPC")
        relay.target = second.card()
        first = await stack(relay, observed=True)
        async with A2AClient.from_card(first.card(), ClientOptions(prefer=["GRPC"])) as client:
            reply = await client.send_text("hello")
        assert reply.task.artifacts[0].parts[0].text == "relayed: echo: hello"
        assert exporter.get_finished_spans() == ()
    finally:
        tracing.install(None)
        made.shutdown()
