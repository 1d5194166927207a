"""Peers we did not write, as fixtures (installed by tests/interop/envs.py).

Under CI (CI=true) a failed install fails the run; elsewhere it skips.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from . import envs


def _installed(install: Callable[[], Path]) -> Path:
    """What `install` gives, or a skip (a failure under CI) saying why not."""
    try:
        return install()
    except envs.Unavailable as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(str(exc))
        pytest.skip(str(exc))


@pytest.fixture(scope="session")
def sdk_python() -> Path:
    """Python of a virtualenv holding the official SDK."""
    return _installed(envs.sdk_python)


@pytest.fixture(scope="session")
def sdk03_python() -> Path:
    """Python of a virtualenv holding the official SDK's 0.3 line."""
    return _installed(envs.sdk03_python)


@pytest.fixture(scope="session")
def node_modules() -> Path:
    """node_modules holding grpc-js, proto-loader and @a2a-js/sdk (npm, first run only)."""
    return _installed(envs.node_modules)
