"""Task stores: where tasks, their sequence numbers and webhook configs live."""

from .base import Scope, StoredTask, StoreUnavailableError, TaskStore
from .memory import MemoryTaskStore

__all__ = ["MemoryTaskStore", "Scope", "StoreUnavailableError", "StoredTask", "TaskStore"]
