"""Replicas asking each other (RedisEventBus.ask/answer), over Redis Pub/Sub.

`{prefix}:ctl` carries requests ("cancel task T of (tenant, owner)", "take
this follow-up message for T"). Every
replica listening answers each request on the request's own reply channel:
done when it did it (it runs the task), not done otherwise, or refused
(bus/base.py has the answers' bytes). The asker counts
the answers PUBLISH said it would get: the first "done" ends the wait, as
does a refusal (the error the one running it refused with, raised to the
asker's caller); all "no" (or `ASK_TIMEOUT_S` without an answer) mean
nobody runs the task.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import uuid
from typing import Any

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from a2a_grpc.bus.answers import DONE, NOT_DONE, answered, refusal
from a2a_grpc.bus.base import Control
from a2a_grpc.core.errors import A2AError, UnavailableError

log = logging.getLogger("a2a_grpc.bus")

ASK_TIMEOUT_S = 10.0  # a replica's cancel may wait for its agent's cancel() a while
LISTEN_POLL_S = 1.0  # the listener looks at its stop flag this often


class ControlChannel:
    def __init__(self, client: aioredis.Redis, prefix: str) -> None:
        self._redis = client
        self.channel = f"{prefix}:ctl"
        self._prefix = prefix
        self._listener: asyncio.Task[None] | None = None
        self._handling: set[asyncio.Task[None]] = set()
        self._stopped = False

    async def ask(self, kind: str, scope: tuple[str, str], task_id: str,
                  body: bytes = b"") -> bool:
        reply = f"{self._prefix}:ctl:reply:{uuid.uuid4().hex}"
        pubsub = self._redis.pubsub()
        try:
            await pubsub.subscribe(reply)
            asked = await self._redis.publish(self.channel, json.dumps({
                "kind": kind, "tenant": scope[0], "owner": scope[1], "task": task_id,
                "body": base64.b64encode(body).decode(), "reply": reply}))
            answers = 0
            async with asyncio.timeout(ASK_TIMEOUT_S):
                while answers < asked:
                    message = await pubsub.get_message(ignore_subscribe_messages=True,
                                                       timeout=ASK_TIMEOUT_S)
                    if message is None:
                        continue
                    answers += 1
                    data = message["data"]
                    if data != NOT_DONE:
                        return answered(data)
        except TimeoutError:
            log.warning("asked the replicas to %s task %s: %d answer(s) in %g s", kind,
                        task_id, answers, ASK_TIMEOUT_S)
        except (RedisError, OSError) as exc:
            raise UnavailableError("the event bus (Redis) is unreachable; try again shortly",
                                   metadata={"taskId": task_id}) from exc
        finally:
            await pubsub.aclose()  # type: ignore[no-untyped-call]
        return False

    def answer(self, on: Control) -> None:
        if self._listener is None:
            self._listener = asyncio.get_running_loop().create_task(
                self._listen(on), name="a2a-bus-control")

    async def close(self) -> None:
        self._stopped = True
        if self._listener is not None:
            await asyncio.wait([self._listener], timeout=LISTEN_POLL_S * 2)
            self._listener.cancel()

    async def _listen(self, on: Control) -> None:
        while not self._stopped:
            pubsub = self._redis.pubsub()
            try:
                await pubsub.subscribe(self.channel)
                while not self._stopped:
                    message = await pubsub.get_message(ignore_subscribe_messages=True,
                                                       timeout=LISTEN_POLL_S)
                    if message is not None:
                        handling = asyncio.get_running_loop().create_task(
                            self._handle(on, json.loads(message["data"])))
                        self._handling.add(handling)
                        handling.add_done_callback(self._handling.discard)
            except (RedisError, OSError) as exc:
                log.warning("the control channel was cut (%s): listening again in %g s",
                            exc, LISTEN_POLL_S)
                await asyncio.sleep(LISTEN_POLL_S)
            finally:
                await pubsub.aclose()  # type: ignore[no-untyped-call]

    async def _handle(self, on: Control, request: dict[str, Any]) -> None:
        answer = NOT_DONE
        try:
            if await on(str(request["kind"]), (str(request["tenant"]), str(request["owner"])),
                        str(request["task"]), base64.b64decode(request.get("body", ""))):
                answer = DONE
        except A2AError as exc:  # the agent refused: the asker's caller gets the refusal
            log.info("another replica asked to %s task %s: %s", request.get("kind"),
                     request.get("task"), exc)
            answer = refusal(exc)
        except Exception:
            log.exception("doing what another replica asked (%s) failed", request.get("kind"))
        try:
            await self._redis.publish(str(request["reply"]), answer)
        except (RedisError, OSError) as exc:
            log.warning("could not answer another replica: %s", exc)
