"""Where the shards of a SQLite store are (stores/shards.py): their files,
and which shard holds a task or a context."""

from __future__ import annotations

from pathlib import Path

MAX_SHARDS = 256  # the two hex digits a task id names its shard with
KNOWN = 65536  # ids remembered in a shard their id does not name
_HEX = frozenset("0123456789abcdefABCDEF")


def shard_path(path: Path, shard: int) -> Path:
    return path if shard == 0 else path.with_name(f"{path.name}.shard-{shard}")


def shards_on_disk(path: Path) -> int:
    """How many shards the store at `path` has (1 for a plain file)."""
    prefix = f"{path.name}.shard-"
    found = [int(p.name[len(prefix):]) for p in path.parent.glob(prefix + "*")
             if p.name[len(prefix):].isdigit()] if path.parent.is_dir() else []
    return max(found, default=0) + 1


def named_shard(key: str, count: int) -> int:
    """The shard a task or context id names: its last two hex digits, if a shard."""
    tail = key[-2:]
    if len(tail) != 2 or not all(c in _HEX for c in tail):  # int() takes "-1", " 1"
        return 0
    shard = int(tail, 16)
    return shard if shard < count else 0


class Placement:
    """The shard of an id: the one it names, unless it was found in another
    (an id made before that shard existed), then remembered."""

    def __init__(self, count: int) -> None:
        self.count = count
        self._found: dict[str, int] = {}

    def __call__(self, key: str) -> int:
        shard = self._found.get(key)
        return named_shard(key, self.count) if shard is None else shard

    def found(self, key: str, shard: int) -> None:
        if len(self._found) >= KNOWN:
            self._found.pop(next(iter(self._found)))
        self._found[key] = shard
