"""`benchmarks.revisions.checkout`: an earlier revision beside this checkout,
whose `python -m a2a_grpc` is that revision's package, gone afterwards."""

from __future__ import annotations

import subprocess
import sys

import pytest

from benchmarks.revisions import checkout
from benchmarks.servers import ROOT


def git(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True)


def test_a_revision_is_checked_out_beside_and_removed_after() -> None:
    earlier = git("rev-parse", "--verify", "HEAD~1^{commit}")
    if earlier.returncode != 0:
        pytest.skip("no earlier commit here (a shallow clone): `git fetch --unshallow`")
    with checkout(earlier.stdout.strip()) as tree:
        assert git("-C", str(tree), "rev-parse", "HEAD").stdout == earlier.stdout
        found = subprocess.run(
            [sys.executable, "-c", "import a2a_grpc; print(a2a_grpc.__file__)"],
            cwd=tree, capture_output=True, text=True, check=True)
        assert found.stdout.startswith(str(tree)), found.stdout
    assert not tree.exists()
    assert str(tree) not in git("worktree", "list").stdout
