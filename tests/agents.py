"""Agents that test processes load with `a2a-grpc serve --agent tests.agents:NAME`."""

from __future__ import annotations

from a2a_grpc.demo import DemoAgent


class PushEnabledDemo(DemoAgent):
    """The demo agent with push-notification configs switched on (CRUD only)."""

    def __init__(self) -> None:
        super().__init__()
        self.card.capabilities.push_notifications = True
