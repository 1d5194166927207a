"""The wheel, built once per run, and fresh virtualenvs it is installed in."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.packaging.installed import checkout, make_venv, run


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
