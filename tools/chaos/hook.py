"""The chaos run's webhook: records every push notification it gets (by its
Idempotency-Key, `<taskId>:<seq>`) and answers 200."""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

from aiohttp import web


class Hook:
    def __init__(self) -> None:
        self.got: dict[str, list[int]] = defaultdict(list)  # task id -> seqs, as delivered
        self.finals: dict[str, str] = {}  # task id -> the final state a notification said
        self._runner: web.AppRunner | None = None
        self.url = ""

    async def start(self) -> None:
        app = web.Application()
        app.router.add_post("/push", self._take)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = self._runner.addresses[0][1]
        self.url = f"http://127.0.0.1:{port}/push"

    async def _take(self, request: web.Request) -> web.Response:
        task_id, _, seq = request.headers.get("Idempotency-Key", "").rpartition(":")
        body: dict[str, Any] = json.loads(await request.read())
        if task_id and seq.isdigit():
            self.got[task_id].append(int(seq))
            state = body.get("statusUpdate", {}).get("status", {}).get("state", "")
            if state in ("TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED"):
                self.finals[task_id] = state
        return web.Response()

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
