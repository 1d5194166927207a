"""`serve` and the app Envoy runs talk through FIFOs (pyvoy/drain.py):
each SIGHUP `serve` passes on is one reload, in order with the drain that
ends it; the app says it has drained; a reload registered where no signal
handler can be installed (Envoy's embedded Python: not the main thread)
still runs when asked; and the app follows `serve`'s pid."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading

import pytest

from a2a_grpc.app import hangup
from a2a_grpc.pyvoy.drain import FOLDER, Asker, listen
from tests.processes import all_gone


async def test_reloads_then_the_drain_then_done(monkeypatch: pytest.MonkeyPatch) -> None:
    asker = Asker()
    monkeypatch.setenv(FOLDER, str(asker.folder))
    said: list[str] = []
    drained = asyncio.Event()

    async def drain() -> None:
        said.append("drain")
        drained.set()

    stop = listen(drain, lambda: said.append("reload"))
    try:
        asker.reload()
        asker.reload()
        assert await asker.drain(10)  # `done` heard
        assert said == ["reload", "reload", "drain"]
    finally:
        stop()
        asker.close()


async def test_nobody_listening_is_a_warning_not_an_error(caplog: pytest.LogCaptureFixture
                                                          ) -> None:
    asker = Asker()
    try:
        asker.reload()  # the app has not opened its end
        assert "could not pass SIGHUP on to the app" in caplog.text
    finally:
        asker.close()


def test_a_reload_runs_where_no_signal_handler_can_be_installed() -> None:
    ran: list[str] = []

    async def in_a_thread() -> None:
        forget = hangup.on_hangup(lambda: ran.append("reloaded"))
        hangup.reload_all()
        forget()
        hangup.reload_all()  # forgotten: not again

    worker = threading.Thread(target=lambda: asyncio.run(in_a_thread()))
    worker.start()
    worker.join(10)
    assert ran == ["reloaded"]


async def test_the_app_is_killed_once_serve_is_gone() -> None:
    """`follow` in a child process standing for Envoy, its parent for `serve`:
    the parent exits, the child is SIGKILLed (its own code never ends)."""
    code = ("import asyncio, os, sys; from a2a_grpc.pyvoy.drain import follow\n"
            "async def main():\n"
            "    follow(int(sys.argv[1])); print('following', flush=True)\n"
            "    await asyncio.sleep(60)\n"
            "asyncio.run(main())")
    parent = await asyncio.create_subprocess_exec(
        sys.executable, "-c", "import sys; sys.stdin.read()", stdin=subprocess.PIPE)
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-c", code, str(parent.pid), stdout=subprocess.PIPE)
    try:
        assert child.stdout is not None and parent.stdin is not None
        assert await asyncio.wait_for(child.stdout.readline(), 30) == b"following\n"
        parent.stdin.close()  # the parent ends
        await asyncio.wait_for(parent.wait(), 10)
        assert await asyncio.wait_for(child.wait(), 10) == -9
    finally:
        for proc in (child, parent):
            if proc.returncode is None:
                proc.kill()
                await proc.wait()


async def test_the_app_dies_with_serve_whatever_its_loop_is_doing() -> None:
    """`follow` from a child of the process it follows (as Envoy is `serve`'s
    child): the kernel's parent-death signal kills it as the parent exits,
    though its loop is blocked and would never see a pidfd."""
    child = ("import asyncio, os, sys, time; from a2a_grpc.pyvoy.drain import follow\n"
             "async def main():\n"
             "    follow(os.getppid()); print(os.getpid(), flush=True)\n"
             "    time.sleep(60)  # the loop blocked\n"
             "asyncio.run(main())")
    parent = ("import subprocess, sys\n"
              f"p = subprocess.Popen([sys.executable, '-c', {child!r}], stdout=subprocess.PIPE)\n"
              "print(p.stdout.readline().decode().strip(), flush=True)\n"
              "sys.stdin.read()")
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", parent, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdout is not None and proc.stdin is not None
    pid = int(await asyncio.wait_for(proc.stdout.readline(), 30))
    proc.stdin.close()  # the parent ends
    await asyncio.wait_for(proc.wait(), 10)
    assert not await all_gone([pid]), "the child outlived its parent"
