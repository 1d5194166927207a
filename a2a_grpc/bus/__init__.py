"""Event buses: fan a task's events out, in order, to every subscriber."""

from .base import EventBus, Subscription
from .local import Backlog, LocalEventBus

__all__ = ["Backlog", "EventBus", "LocalEventBus", "Subscription"]
