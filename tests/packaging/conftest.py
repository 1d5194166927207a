"""The wheel, built once per run, and fresh virtualenvs it is installed in."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.interop.envs import SDK03_PACKAGES
from tests.packaging.installed import checkout, make_venv, run

# The official SDK's 1.x line beside our wheel (its 0.3 line: SDK03_PACKAGES).
SDK = ("a2a-sdk[grpc,http-server]==1.3.0", "uvicorn>=0.30")


@pytest.fixture(scope="session")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the wheel, the Python of a fresh virtualenv it is installed in)."""
    home = tmp_path_factory.mktemp("wheel")
    source = checkout(home / "source")
    run(sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", home / "dist", source,
         cwd=home)
    [wheel] = (home / "dist").glob("a2a_grpc-*.whl")
    return wheel, make_venv(home, str(wheel))


@pytest.fixture(scope="session")
def installed_all(installed: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Python of a fresh virtualenv with the wheel and every extra (`[all]`)."""
    wheel, _ = installed
    return make_venv(tmp_path_factory.mktemp("wheel-all"), f"{wheel}[all]")


@pytest.fixture(scope="session")
def installed_pyvoy(installed: tuple[Path, Path],
                    tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Python of a fresh virtualenv with the wheel and `[pyvoy]`."""
    wheel, _ = installed
    return make_venv(tmp_path_factory.mktemp("wheel-pyvoy"), f"{wheel}[pyvoy]")


@pytest.fixture(scope="session")
def with_sdk(installed: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Python of a fresh virtualenv with the wheel and a2a-sdk 1.x."""
    wheel, _ = installed
    return make_venv(tmp_path_factory.mktemp("with-sdk"), str(wheel), *SDK)


@pytest.fixture(scope="session")
def with_sdk03(installed: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Python of a fresh virtualenv with the wheel and a2a-sdk 0.3.x."""
    wheel, _ = installed
    return make_venv(tmp_path_factory.mktemp("with-sdk03"), str(wheel), *SDK03_PACKAGES)
