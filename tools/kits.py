"""The checkouts and virtualenvs that the kits and peers we did not write run
in: the conformance kits (`make tck`, `make tck10`), the integration test kit
(`make itk`), and the official SDKs the interop tests and benchmarks drive
(tests/interop/envs.py). One place for how each is found and installed.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import subprocess
import sys
import venv
from collections.abc import Iterator, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
INTEROP = ROOT / ".interop"  # every virtualenv here, one folder each


class InstallFailed(Exception):
    """pip could not install what a virtualenv should hold; the message says why."""


def installer(python: Path) -> list[str]:
    """The command that installs packages into `python`'s virtualenv: uv's
    pip (the dev extra's; it resolves and installs from its cache in seconds
    where pip takes a minute), else that virtualenv's own pip. Either takes
    pip's arguments; neither compiles what it installs (a test imports a small
    part of it, compiled as it is imported)."""
    uv = shutil.which("uv", path=str(Path(sys.executable).parent)) or shutil.which("uv")
    if uv:
        return [uv, "pip", "install", "--quiet", "--python", str(python)]
    return [str(python), "-m", "pip", "install", "-q", "--no-compile"]


def checkout(variable: str, target: str, needs: Sequence[str], clone: str) -> Path:
    """The kit's checkout that `variable` names, holding each path in `needs`;
    else the process stops saying how to get one (`clone`: the command)."""
    raw = os.environ.get(variable)
    if not raw:
        sys.exit(f"make {target}: set {variable} to a checkout of it ({clone}), e.g. "
                 f"`make {target} {variable}=../kit`")
    path = Path(raw).resolve()
    missing = [n for n in needs if not (path / n).exists()]
    if missing:
        sys.exit(f"make {target}: {path} is not the right checkout (no {', '.join(missing)})")
    return path


@contextlib.contextmanager
def one_maker(name: str) -> Iterator[None]:
    """While .interop/NAME is made: one process at a time (a parallel test run,
    a bench beside it); the others wait, then find it made (its stamp)."""
    INTEROP.mkdir(parents=True, exist_ok=True)
    with (INTEROP / f".{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def venv_with(name: str, requirements: Sequence[str]) -> Path:
    """The Python of .interop/NAME, a virtualenv holding `requirements` (pip's
    arguments: packages, or `-e PATH`), made on first use and made again when
    the requirements change. Raises InstallFailed."""
    home = INTEROP / name
    python, stamp = home / "bin" / "python", home / "installed.txt"
    wanted = "\n".join(requirements)
    if stamp.exists() and stamp.read_text() == wanted:
        return python
    with one_maker(name):
        if stamp.exists() and stamp.read_text() == wanted:
            return python
        print(f"\ninstalling {' '.join(requirements)} into {home} (first run only)...",
              file=sys.stderr, flush=True)
        failed = ""
        for _ in range(2):  # a second time from scratch: pip has failed once, then not
            venv.create(home, with_pip=True, clear=True)
            # From the virtualenv's own folder: `python -m` puts the working directory
            # on the path, and the checkout's a2a_grpc.egg-info there would pass for
            # an installed a2a-grpc.
            done = subprocess.run([*installer(python), *requirements],
                                  capture_output=True, text=True, timeout=900, check=False,
                                  cwd=home)
            if done.returncode == 0:
                stamp.write_text(wanted)
                return python
            failed = done.stderr[-2000:]
            print(f"the install failed in {home}; once more from scratch", file=sys.stderr,
                  flush=True)
    raise InstallFailed(f"{' '.join(requirements)} could not be installed: {failed}")


def kit_venv(name: str, requirements: Sequence[str]) -> Path:
    """`venv_with` for a make target: a failed install stops the process."""
    try:
        return venv_with(name, requirements)
    except InstallFailed as exc:
        sys.exit(str(exc))
