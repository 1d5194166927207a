"""An earlier revision of ours checked out beside this one (`git worktree`),
to be measured side by side with it: `benchmarks.against` (calls a second)
and `make bench-instructions ARGS="--wire --against REV"` (instructions)."""

from __future__ import annotations

import contextlib
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

from .servers import ROOT


@contextlib.contextmanager
def checkout(rev: str) -> Iterator[Path]:
    """`rev`'s tree; `python -m a2a_grpc` run from it serves that revision (its
    package comes first on the path), with this virtualenv's dependencies."""
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "tree"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "--quiet",
                        str(tree), rev], check=True)
        try:
            yield tree
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)],
                           check=False)
