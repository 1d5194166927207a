"""Event buses: fan a task's events out, in order, to every subscriber."""

from .base import EventBus, Subscription
from .local import LocalEventBus

__all__ = ["EventBus", "LocalEventBus", "Subscription"]
