"""What the client verbs print: text for people, or one JSON object per line
(`--json`), and the exit code a final task state maps to."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, TextIO

from google.protobuf import json_format
from google.protobuf.message import Message

from a2a_grpc.client.errors import BadResponseError, NoUsableInterfaceError
from a2a_grpc.core import lifecycle, states
from a2a_grpc.core.errors import (
    A2AError,
    InternalError,
    InvalidAgentResponseError,
    InvalidRequestError,
    MethodNotFoundError,
    ParseError,
    ResourceExhaustedError,
    UnavailableError,
    VersionNotSupportedError,
)
from a2a_grpc.generated import a2a_pb2 as pb

EXIT = {states.COMPLETED: 0, states.FAILED: 1, states.REJECTED: 1, states.CANCELED: 1,
        states.INPUT_REQUIRED: 3, states.AUTH_REQUIRED: 3}
# Exit status 4: the agent could not be reached or understood, or refuses everyone
# for now; any other A2A error is its answer to this request (no such task, not
# cancelable, invalid parameters, not allowed, ...): 6. Usage mistakes are 2.
UNREACHED = (UnavailableError, ResourceExhaustedError, BadResponseError, NoUsableInterfaceError,
             ParseError, InvalidRequestError, MethodNotFoundError, VersionNotSupportedError,
             InternalError, InvalidAgentResponseError)


def exit_for(error: A2AError) -> int:
    return 4 if isinstance(error, UNREACHED) else 6


def _text(msg: pb.Message) -> str:
    return " ".join(p.text for p in msg.parts if p.WhichOneof("content") == "text")


def _whole(value: Any) -> Any:
    """JSON's numbers as JSON writes them: 10, not protobuf's double 10.0."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    if isinstance(value, dict):
        return {k: _whole(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_whole(v) for v in value]
    return value


class Output:
    def __init__(self, stream: TextIO, as_json: bool, out_dir: Path) -> None:
        self.stream = stream
        self.as_json = as_json
        self.out_dir = out_dir
        self.live = stream.isatty() and not as_json
        # Artifacts a stream built from appended chunks: their text parts are
        # pieces of one text (a model's tokens), shown joined in the summary.
        self._appended: set[str] = set()

    def json(self, msg: Message) -> None:
        print(json.dumps(json_format.MessageToDict(msg), ensure_ascii=False), file=self.stream)

    def line(self, human: str, data: Any = None) -> None:
        if self.as_json:
            print(json.dumps(data), file=self.stream)
        else:
            print(human, file=self.stream)

    def card(self, card: pb.AgentCard, chosen: pb.AgentInterface) -> None:
        if self.as_json:
            return self.json(card)
        caps = card.capabilities
        print(f"{card.name} {card.version}: {card.description}", file=self.stream)
        for i in card.supported_interfaces:
            mark = "*" if i == chosen else " "
            print(f" {mark} {i.protocol_binding:<9} {i.url} (A2A {i.protocol_version})",
                  file=self.stream)
        flags = [name for name, on in (("streaming", caps.streaming),
                                       ("push", caps.push_notifications),
                                       ("extended card", caps.extended_agent_card)) if on]
        print(f"   capabilities: {', '.join(flags) or 'none'}", file=self.stream)
        for skill in card.skills:
            print(f"   skill {skill.id}: {skill.description}", file=self.stream)
        return None

    def message(self, msg: pb.Message) -> None:
        if self.as_json:
            return self.json(msg)
        print(f"agent: {_text(msg)}", file=self.stream)
        return None

    def task(self, task: pb.Task) -> None:
        if self.as_json:
            return self.json(task)
        print(f"task {task.id} (context {task.context_id}): "
              f"{states.name(task.status.state)}", file=self.stream)
        if task.status.HasField("message") and _text(task.status.message):
            print(f"  agent: {_text(task.status.message)}", file=self.stream)
        for art in task.artifacts:
            self.artifact(art)
        return None

    def artifact(self, art: pb.Artifact) -> None:
        label = art.name or art.artifact_id
        joined = art.artifact_id in self._appended
        texts: list[str] = []
        for i, part in enumerate(art.parts):
            kind = part.WhichOneof("content")
            if kind == "text":
                texts.append(part.text)
                if joined and i + 1 < len(art.parts) and art.parts[i + 1].WhichOneof(
                        "content") == "text":
                    continue  # the next chunk goes on this text
                text = "".join(texts).rstrip("\n").replace("\n", "\n    ")
                texts.clear()
                print(f"  [{label}] {text}", file=self.stream)
            elif kind == "raw":
                path = self.save(part)
                print(f"  [{label}] saved {path} ({len(part.raw)} bytes)", file=self.stream)
            elif kind == "url":
                print(f"  [{label}] {part.url}", file=self.stream)
            elif kind == "data":
                value = _whole(json_format.MessageToDict(part.data))
                print(f"  [{label}] " + json.dumps(value, indent=2).replace("\n", "\n    "),
                      file=self.stream)

    def save(self, part: pb.Part) -> Path:
        name = Path(part.filename).name if part.filename else "artifact.bin"
        self.out_dir.mkdir(parents=True, exist_ok=True)
        path = self.out_dir / name
        path.write_bytes(part.raw)
        return path

    def listing(self, listed: pb.ListTasksResponse) -> None:
        if self.as_json:
            return self.json(listed)
        for task in listed.tasks:
            stamp = task.status.timestamp.ToJsonString() if task.status.HasField(
                "timestamp") else ""
            print(f"{task.id}  {states.name(task.status.state):<15} {stamp}  "
                  f"context {task.context_id}", file=self.stream)
        more = f"; next page: --page-token {listed.next_page_token}" if \
            listed.next_page_token else ""
        print(f"{len(listed.tasks)} of {listed.total_size} tasks{more}", file=self.stream)
        return None

    def config(self, config: pb.TaskPushNotificationConfig) -> None:
        if self.as_json:
            return self.json(config)
        print(f"config {config.id} of task {config.task_id}: {config.url}", file=self.stream)
        return None

    async def follow(self, events: Any) -> int:
        """Print a stream; the exit status comes from where the task ended."""
        task: pb.Task | None = None
        chunks, started, state = 0, time.monotonic(), ""
        async for event in events:
            kind = event.WhichOneof("payload")
            if self.as_json:
                self.json(event)
            if kind == "message":
                if not self.as_json:
                    self.message(event.message)
                return 0
            if kind == "task":
                task = event.task
            elif task is not None:
                try:
                    lifecycle.apply(task, event)
                except A2AError:
                    pass  # display only: the server is the judge of the lifecycle
            if kind == "artifact_update":
                chunks += 1
                if event.artifact_update.append:
                    self._appended.add(event.artifact_update.artifact.artifact_id)
            state = states.name(task.status.state) if task is not None else state
            if self.as_json:
                continue
            if self.live:
                print(f"\r{state} · {chunks} chunks · {time.monotonic() - started:.1f} s   ",
                      end="", file=self.stream, flush=True)
            else:
                self._event_line(event)
        if self.live:
            print(file=self.stream)
        if task is None:
            return 4
        if not self.as_json:
            self.task(task)
        return EXIT.get(task.status.state, 0)

    def _event_line(self, event: pb.StreamResponse) -> None:
        kind = event.WhichOneof("payload")
        if kind == "task":
            print(f"task {event.task.id}: {states.name(event.task.status.state)}",
                  file=self.stream)
        elif kind == "status_update":
            st = event.status_update.status
            text = f": {_text(st.message)}" if st.HasField("message") else ""
            print(f"status {states.name(st.state)}{text}", file=self.stream)
        elif kind == "artifact_update":
            art = event.artifact_update.artifact
            texts = " ".join(p.text for p in art.parts if p.WhichOneof("content") == "text")
            print(f"artifact {art.name or art.artifact_id}: {texts}", file=self.stream)
