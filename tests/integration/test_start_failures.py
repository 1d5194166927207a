"""What `serve` says when it cannot start, on every carrier and under
--workers: one line naming what is wrong and where, said once (not once per
worker), no traceback, no Envoy configuration, and "check --store" only for
the store; and nothing left behind (no store made in a folder that is not
there, no store files when the port is taken)."""

from __future__ import annotations

import contextlib
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from a2a_grpc.stores.restore import mark

MODES = [(), ("--grpc-carrier", "pyvoy"), ("--workers", "2"),
         ("--workers", "2", "--grpc-carrier", "pyvoy")]  # pyvoy's skipped without its extra
IDS = ["grpc.aio", "pyvoy", "workers", "workers-pyvoy"]


def serve(tmp_path: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    if "pyvoy" in flags:
        pytest.importorskip("pyvoy", reason="the a2a-grpc[pyvoy] extra is not installed")
    if "--store" not in flags:
        flags = (*flags, "--store", f"sqlite:///{tmp_path / 'tasks.db'}")
    return subprocess.run([sys.executable, "-m", "a2a_grpc", "serve", "--http-port", "0",
                           "--grpc-port", "0", *flags], cwd=tmp_path, capture_output=True,
                          text=True, timeout=90)


def said(done: subprocess.CompletedProcess[str]) -> list[str]:
    """What it said as its reason: the lines that are not log lines."""
    return [line for line in done.stderr.splitlines()
            if line and not line[:4].isdigit()]  # log lines begin with the date


@pytest.mark.parametrize("mode", MODES, ids=IDS)
@pytest.mark.parametrize(("source", "says"), [
    ("x = (\n", "SyntaxError: '(' was never closed ({path}, line 1)"),
    ("import os\nraise RuntimeError('boom at import')\n",
     "RuntimeError: boom at import ({path}, line 2, importing broken)")],
    ids=["syntax", "raises"])
def test_an_agent_that_cannot_be_imported_is_said_in_one_line(
        tmp_path: Path, mode: tuple[str, ...], source: str, says: str) -> None:
    (tmp_path / "broken.py").write_text(source)
    done = serve(tmp_path, "--agent", "broken:Agent", *mode)
    expected = ("a2a-grpc: cannot load agent 'broken:Agent': "
                + says.format(path=tmp_path / "broken.py"))
    assert (done.returncode, said(done)) == (2, [expected]), done.stderr
    assert "Traceback" not in done.stderr
    assert "static_resources" not in done.stderr  # Envoy's configuration


@pytest.mark.parametrize("mode", MODES, ids=IDS)
def test_a_store_in_a_folder_that_is_not_there_is_refused(
        tmp_path: Path, mode: tuple[str, ...]) -> None:
    typo = tmp_path / "dta" / "tasks.db"
    done = serve(tmp_path, "--store", f"sqlite:///{typo}", *mode)
    assert done.returncode == 1, done.stderr
    [line] = said(done)
    assert f"there is no folder {typo.parent}" in line and line.endswith("; check --store")
    assert not typo.parent.exists()


@pytest.mark.parametrize("mode", MODES, ids=IDS)
def test_a_store_that_is_not_a_database_is_said_in_one_line(
        tmp_path: Path, mode: tuple[str, ...]) -> None:
    junk = tmp_path / "notes.db"
    junk.write_text("not a database")
    done = serve(tmp_path, "--store", f"sqlite:///{junk}", *mode)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    [line] = said(done)
    assert "not a database" in line and line.endswith("; check --store"), line


def test_only_store_errors_are_told_to_check_the_store(tmp_path: Path) -> None:
    (tmp_path / "broken.py").write_text("raise OSError('no such device')\n")
    done = serve(tmp_path, "--agent", "broken:Agent")
    assert done.returncode == 2 and "no such device" in done.stderr, done.stderr
    assert "check --store" not in done.stderr
    done = serve(tmp_path, "--store", "postgresql://nobody@127.0.0.1:1/none")
    assert done.returncode == 1 and said(done)[0].startswith(
        "a2a-grpc: cannot open the store postgresql://nobody@127.0.0.1:1/none"), done.stderr
    assert said(done)[0].endswith("; check --store")


@pytest.mark.parametrize("mode", MODES, ids=IDS)
@pytest.mark.parametrize("flags", [("--card", "absent.json"), ("--agent", "no_such_module:Agent"),
                                   ("--agent", "json:no_such_attr")],
                         ids=["card", "module", "attr"])
def test_what_stops_a_start_is_said_without_the_usage(
        tmp_path: Path, mode: tuple[str, ...], flags: tuple[str, ...]) -> None:
    """The flags were written right; what they name is wrong: one line, exit
    status 2, no `usage:` banner (that is for a mistyped flag)."""
    done = serve(tmp_path, *flags, *mode)
    assert done.returncode == 2, done.stderr
    assert "usage:" not in done.stderr and "Traceback" not in done.stderr, done.stderr
    [line] = said(done)
    assert flags[1].split(":")[0] in line, line


def test_a_mistyped_flag_still_shows_the_usage(tmp_path: Path) -> None:
    done = serve(tmp_path, "--workers", "0")
    assert done.returncode == 2 and "usage:" in done.stderr, done.stderr
    done = serve(tmp_path, "--no-such-flag")
    assert done.returncode == 2 and "usage:" in done.stderr, done.stderr


def test_a_shard_beside_a_backup_copied_by_hand_is_said_without_the_usage(
        tmp_path: Path) -> None:
    """A backup of one file copied over the store by hand, beside the shard
    a `--workers 2` run made: refused in one line, no usage banner."""
    store = tmp_path / "tasks.db"
    with contextlib.closing(sqlite3.connect(store)) as conn:
        mark(conn, "b1", 0, 1)  # as `a2a-grpc backup` marks its one file
    (tmp_path / "tasks.db.shard-1").write_bytes(store.read_bytes())
    done = serve(tmp_path)
    assert done.returncode in (1, 2) and "not from that backup" in done.stderr, done.stderr
    assert "usage:" not in done.stderr and "Traceback" not in done.stderr, done.stderr
