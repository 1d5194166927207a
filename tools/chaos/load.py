"""The load of a chaos run: clients that start operations at a set rate on a
random replica, move to another one when a replica fails them (refused or
cut connections, no answer, 503), as a balancer with health checks would,
and write down what they were told: the history the checker reads.

Operations (JSON-RPC, every answer checked):
- send: a blocking SendMessage (retried with the same messageId: idempotent);
- async: SendMessage of a slow task with returnImmediately;
- stream: SendStreamingMessage of a slow task, resumed with Last-Event-ID on
  another replica whenever the stream drops, until a final state;
- cancel: a slow task, then CancelTask;
- followup: a task asking for input, then the answer;
- push: a 1 s task sent with a webhook (hook.py) and returnImmediately.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import aiohttp

RESUMABLE = "urn:a2a-grpc:extension:resumable-streams:v2"
HEADERS = {"A2A-Version": "1.0", "A2A-Extensions": RESUMABLE}
FINAL = {"TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED",
         "TASK_STATE_REJECTED"}
SETTLED = FINAL | {"TASK_STATE_INPUT_REQUIRED", "TASK_STATE_AUTH_REQUIRED"}
KINDS = ("send", "send", "send", "async", "stream", "cancel", "followup", "push")
CALL_TIMEOUT = 8.0  # a replica that takes longer is taken for stopped
ATTEMPTS = 40


class Refused(Exception):
    """The replica did not answer the call (down, stopped, cut, or draining)."""


@dataclass
class Op:
    id: int
    kind: str
    start: float
    end: float = 0.0
    task_id: str = ""
    acked: str = ""  # the state the client was told, if it was told one
    error: str = ""
    retries: int = 0
    unavailable: float = 0.0  # seconds between the first failure and the answer
    seqs: list[int] = field(default_factory=list)  # a stream's event ids, as seen
    trace: list[str] = field(default_factory=list)  # a stream's events, as seen, in short
    finals: list[str] = field(default_factory=list)  # final states the client saw


def message(text: str, task_id: str = "", context_id: str = "") -> dict[str, Any]:
    m: dict[str, Any] = {"messageId": str(uuid.uuid4()), "role": "ROLE_USER",
                         "parts": [{"text": text}]}
    if task_id:
        m["taskId"], m["contextId"] = task_id, context_id
    return m


class Load:
    def __init__(self, urls: list[str], rate: float, seed: int, hook_url: str = "") -> None:
        self.urls, self.rate, self.hook_url = urls, rate, hook_url
        self.random = random.Random(seed)
        self.ops: list[Op] = []
        self._http: aiohttp.ClientSession | None = None

    async def run(self, seconds: float) -> None:
        self._http = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(
            total=None, sock_connect=2, sock_read=CALL_TIMEOUT))
        running: set[asyncio.Task[None]] = set()
        try:
            end = time.monotonic() + seconds
            kinds = KINDS if self.hook_url else tuple(k for k in KINDS if k != "push")
            while time.monotonic() < end:
                op = Op(len(self.ops), self.random.choice(kinds), time.monotonic())
                self.ops.append(op)
                job = asyncio.create_task(self._do(op))
                running.add(job)
                job.add_done_callback(running.discard)
                await asyncio.sleep(self.random.expovariate(self.rate))
            if running:
                await asyncio.wait(running, timeout=120)
        finally:
            await self._http.close()

    async def _do(self, op: Op) -> None:
        try:
            await getattr(self, f"_{op.kind}")(op)
        except Exception as exc:  # what the client was left with
            op.error = op.error or f"{type(exc).__name__}: {exc}"[:200]
        op.end = time.monotonic()

    # -- calls, moving to another replica when one fails them --

    async def _call(self, op: Op, method: str, params: dict[str, Any]) -> dict[str, Any]:
        failed_at = None
        for attempt in range(ATTEMPTS):
            url = self.urls[(op.id + attempt) % len(self.urls)]
            tried = time.monotonic()
            try:
                result = await self._post(url, method, params)
            except Refused:
                failed_at = failed_at or tried  # a stopped replica costs the whole wait
                op.retries += 1
                await asyncio.sleep(min(0.1 * 2 ** min(attempt, 4), 1.5))
                continue
            if failed_at is not None:
                op.unavailable = max(op.unavailable, time.monotonic() - failed_at)
            return result
        raise Refused(f"{method}: no replica answered in {ATTEMPTS} attempts")

    async def _post(self, url: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
        assert self._http is not None
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
        try:
            async with asyncio.timeout(CALL_TIMEOUT), self._http.post(
                    url + "/", json=body, headers=HEADERS) as resp:
                if resp.status in (502, 503, 504):
                    raise Refused(f"HTTP {resp.status}")
                answer = await resp.json(content_type=None)
        except (aiohttp.ClientError, TimeoutError, ConnectionError) as exc:
            raise Refused(str(exc)) from None
        if "error" in answer:
            error = answer["error"]
            if error.get("code") in (-32000, -32603):  # unavailable, or internal: elsewhere
                raise Refused(str(error.get("message")))
            raise RuntimeError(f"{method}: {error.get('code')} {error.get('message')}")
        return answer["result"]  # type: ignore[no-any-return]

    def _told(self, op: Op, task: dict[str, Any]) -> str:
        state = str(task["status"]["state"])
        op.task_id = op.task_id or str(task["id"])
        if state in FINAL:
            op.finals.append(state)
        return state

    # -- the operations --

    async def _send(self, op: Op) -> None:
        result = await self._call(op, "SendMessage", {"message": message("hello")})
        op.acked = self._told(op, result["task"])

    async def _async(self, op: Op) -> None:
        result = await self._call(op, "SendMessage", {
            "message": message("slow 2"), "configuration": {"returnImmediately": True}})
        op.acked = self._told(op, result["task"])

    async def _push(self, op: Op) -> None:
        result = await self._call(op, "SendMessage", {
            "message": message("slow 1"), "configuration": {
                "returnImmediately": True,
                "taskPushNotificationConfig": {"url": self.hook_url, "token": "chaos"}}})
        op.acked = self._told(op, result["task"])

    async def _cancel(self, op: Op) -> None:
        started = await self._call(op, "SendMessage", {
            "message": message("slow 20"), "configuration": {"returnImmediately": True}})
        self._told(op, started["task"])
        await asyncio.sleep(self.random.uniform(0.2, 1.5))
        try:
            task = await self._call(op, "CancelTask", {"id": op.task_id})
        except RuntimeError as exc:  # not cancelable: it ended first (a survivor failed it)
            op.error = str(exc)[:200]
            return
        op.acked = self._told(op, task)

    async def _followup(self, op: Op) -> None:
        asked = (await self._call(op, "SendMessage", {"message": message("ask")}))["task"]
        if self._told(op, asked) != "TASK_STATE_INPUT_REQUIRED":
            op.acked = asked["status"]["state"]
            return
        answered = await self._call(op, "SendMessage", {
            "message": message("42", asked["id"], asked["contextId"])})
        op.acked = self._told(op, answered["task"])

    async def _stream(self, op: Op) -> None:
        first = message("slow 3")
        params: dict[str, Any]
        for attempt in range(ATTEMPTS):
            url = self.urls[(op.id + attempt) % len(self.urls)]
            last = op.seqs[-1] if op.seqs else None  # also when the last read broke off
            if op.task_id and last is not None:
                method, params = "SubscribeToTask", {"id": op.task_id}
                headers = {**HEADERS, "Last-Event-ID": str(last)}
            else:  # nothing seen yet: send again (the same messageId: the same task)
                method, params, headers = "SendStreamingMessage", {"message": first}, HEADERS
            try:
                done = await self._read_stream(op, url, method, params, headers)
            except Refused:
                op.retries += 1
                await asyncio.sleep(min(0.1 * 2 ** min(attempt, 4), 1.5))
                continue
            if done:
                return
            op.retries += 1
        raise Refused("the stream never reached a final state")

    async def _read_stream(self, op: Op, url: str, method: str, params: dict[str, Any],
                           headers: dict[str, str]) -> bool:
        """Read one stream into `op`; did it reach a final state?"""
        assert self._http is not None
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
        try:
            async with self._http.post(url + "/", json=body, headers=headers) as resp:
                if resp.status != 200 or resp.content_type != "text/event-stream":
                    raise Refused(f"HTTP {resp.status} {resp.content_type}")
                event_id: int | None = None
                async for raw in resp.content:
                    line = raw.decode().rstrip("\n")
                    if line.startswith("id: "):
                        event_id = int(line[4:])
                    elif line.startswith("data: "):
                        data = json.loads(line[6:])
                        if "error" in data:
                            raise Refused(str(data["error"].get("message")))
                        if event_id is not None:
                            op.seqs.append(event_id)
                            op.trace.append(f"{event_id} {_short(data['result'])} "
                                            f"{method} @{url.rsplit(':', 1)[-1]}")
                            event_id = None
                        if self._stream_ended(op, data["result"]):
                            return True
        except (aiohttp.ClientError, TimeoutError, ConnectionError) as exc:
            raise Refused(str(exc)) from None
        return False

    def _stream_ended(self, op: Op, result: dict[str, Any]) -> bool:
        if "task" in result:
            state = self._told(op, result["task"])
            return state in FINAL
        update = result.get("statusUpdate")
        if update is None:
            return False
        op.task_id = op.task_id or update["taskId"]
        state = update["status"]["state"]
        if state in FINAL:
            op.finals.append(state)
            op.acked = state
        return state in SETTLED


def _short(result: dict[str, Any]) -> str:
    if "task" in result:
        return "task " + str(result["task"]["status"]["state"])[11:]
    if "statusUpdate" in result:
        status = result["statusUpdate"]["status"]
        text = status.get("message", {}).get("parts", [{}])[0].get("text", "")
        return f"{status['state'][11:]} {text}".strip()
    return "artifact"
