"""Peers we did not write, as fixtures (installed by tests/interop/envs.py).

Under CI (CI=true) a failed install fails the run; elsewhere it skips.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from . import envs


def _unavailable(message: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(scope="session")
def sdk_python() -> Path:
    """Python of a virtualenv holding the official SDK."""
    try:
        return envs.sdk_python()
    except envs.Unavailable as exc:
        _unavailable(str(exc))
        raise


@pytest.fixture(scope="session")
def sdk03_python() -> Path:
    """Python of a virtualenv holding the official SDK's 0.3 line."""
    try:
        return envs.sdk03_python()
    except envs.Unavailable as exc:
        _unavailable(str(exc))
        raise


@pytest.fixture(scope="session")
def node_modules() -> Path:
    """node_modules holding grpc-js and proto-loader (from npm, first run only)."""
    try:
        return envs.node_modules()
    except envs.Unavailable as exc:
        _unavailable(str(exc))
        raise
