"""Task stores: where tasks, their sequence numbers and webhook configs live."""

from .base import Scope, StoredTask, TaskStore
from .memory import MemoryTaskStore

__all__ = ["MemoryTaskStore", "Scope", "StoredTask", "TaskStore"]
