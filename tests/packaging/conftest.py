"""The wheel, built once per run, and fresh virtualenvs it is installed in,
each made once a run however many pytest-xdist workers use it (installed.once)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.interop.envs import SDK03_PACKAGES
from tests.packaging.installed import checkout, make_venv, once, run

# The official SDK's 1.x line beside our wheel (its 0.3 line: SDK03_PACKAGES).
SDK = ("a2a-sdk[grpc,http-server]==1.3.0", "uvicorn>=0.30")


@pytest.fixture(scope="session")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the wheel, the Python of a fresh virtualenv pip installed it in)."""
    def build(home: Path) -> str:
        source = checkout(home / "source")
        run(sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", home / "dist",
            source, cwd=home)
        [wheel] = (home / "dist").glob("a2a_grpc-*.whl")
        return f"{wheel}\n{make_venv(home, str(wheel), pip=True)}"

    wheel, python = once(tmp_path_factory, "wheel", build).split("\n")
    return Path(wheel), Path(python)


def venv_of(factory: pytest.TempPathFactory, name: str, *requirements: str) -> Path:
    """A fresh virtualenv holding `requirements`, made once a run (installed.once)."""
    return Path(once(factory, name, lambda home: str(make_venv(home, *requirements))))


@pytest.fixture(scope="session")
def installed_all(installed: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Python of a fresh virtualenv with the wheel and every extra (`[all]`)."""
    return venv_of(tmp_path_factory, "wheel-all", f"{installed[0]}[all]")


@pytest.fixture(scope="session")
def installed_pyvoy(installed: tuple[Path, Path],
                    tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Python of a fresh virtualenv with the wheel and `[pyvoy]`."""
    return venv_of(tmp_path_factory, "wheel-pyvoy", f"{installed[0]}[pyvoy]")


@pytest.fixture(scope="session")
def with_sdk(installed: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Python of a fresh virtualenv with the wheel, `[pyvoy]` (its executors
    on both carriers) and a2a-sdk 1.x."""
    return venv_of(tmp_path_factory, "with-sdk", f"{installed[0]}[pyvoy]", *SDK)


@pytest.fixture(scope="session")
def with_sdk03(installed: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Python of a fresh virtualenv with the wheel and a2a-sdk 0.3.x."""
    return venv_of(tmp_path_factory, "with-sdk03", str(installed[0]), *SDK03_PACKAGES)
