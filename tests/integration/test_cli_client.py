"""The client verbs of `a2a-grpc` as a person and a script use them: real
processes against a real server, in --json mode, plain mode and on a terminal."""

from __future__ import annotations

import asyncio
import json
import os
import pty
import signal
import socket
import sys
from pathlib import Path

import pytest

from a2a_grpc.agent import RequestContext, TaskEvents
from a2a_grpc.bridge import CARD
from a2a_grpc.cards.card import Interface, public_card
from a2a_grpc.generated import a2a_pb2 as pb
from tests.conftest import Stack, StackFactory
from tests.fakes import ScriptedAgent
from tests.processes import ROOT


async def expose(s: Stack) -> str:
    base = str(s.http.make_url("")).rstrip("/")
    card = public_card(s.handler.card, [
        Interface("GRPC", f"grpc://127.0.0.1:{s.grpc_server.port}"),
        Interface("JSONRPC", base + "/"), Interface("HTTP+JSON", base)])
    s.handler.card = card
    s.http.app[CARD].update(card)
    return base


async def cli(*args: str, cwd: Path = ROOT) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "a2a_grpc", *args, cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    return proc.returncode or 0, out.decode(), err.decode()


@pytest.fixture
async def url(stack: StackFactory) -> str:
    return await expose(await stack())


async def test_card(url: str) -> None:
    code, out, _ = await cli("card", url)
    assert code == 0
    assert out.startswith("a2a-grpc demo agent")
    assert " * GRPC" in out and "JSONRPC" in out and "capabilities: streaming, push" in out
    code, out, _ = await cli("card", url, "--json")
    card = json.loads(out)
    assert [i["protocolBinding"] for i in card["supportedInterfaces"]] == [
        "GRPC", "JSONRPC", "HTTP+JSON"]


@pytest.mark.parametrize("binding", ["grpc", "jsonrpc", "rest"])
async def test_send_and_exit_statuses(url: str, binding: str) -> None:
    code, out, _ = await cli("send", url, "hello", "--binding", binding)
    assert code == 0 and ": completed" in out and "[echo] echo: hello" in out
    code, out, _ = await cli("send", url, "ask", "--binding", binding)
    assert code == 3 and "input_required" in out and "What is your answer?" in out
    task_id = out.split()[1]
    code, out, _ = await cli("send", url, "42", "--task", task_id, "--binding", binding)
    assert code == 0 and "answer: 42" in out
    code, out, _ = await cli("send", url, "reply hi", "--binding", binding)
    assert (code, out) == (0, "agent: hi\n")
    code, _, err = await cli("get", url, "nope", "--binding", binding)
    assert code == 6 and "TaskNotFoundError" in err


async def test_json_mode_is_one_object_per_line(url: str) -> None:
    code, out, _ = await cli("stream", url, "stream 3", "--json")
    lines = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and len(lines) == 6
    assert lines[0]["task"]["status"]["state"] == "TASK_STATE_SUBMITTED"
    assert [x["artifactUpdate"]["artifact"]["parts"][0]["text"] for x in lines[2:5]] == [
        "chunk 1/3", "chunk 2/3", "chunk 3/3"]
    code, out, _ = await cli("list", url, "--status", "completed", "--json")
    assert json.loads(out)["totalSize"] == 1
    code, _, err = await cli("list", url, "--status", "running")
    assert code != 0 and "use one of" in err


async def test_plain_stream_output(url: str) -> None:
    code, out, _ = await cli("stream", url, "stream 2")
    assert code == 0
    assert out.splitlines()[:5] == [out.splitlines()[0], "status working",
                                    "artifact chunks: chunk 1/2", "artifact chunks: chunk 2/2",
                                    "status completed"]
    assert out.splitlines()[0].endswith(": submitted")


async def test_a_terminal_gets_a_live_progress_line(url: str) -> None:
    main, child = pty.openpty()
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "a2a_grpc", "stream", url, "stream 4", cwd=ROOT,
        stdout=child, stderr=child)
    os.close(child)
    code = await asyncio.wait_for(proc.wait(), 60)
    chunks = []
    while True:
        try:
            data = os.read(main, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    os.close(main)
    screen = b"".join(chunks).decode()
    assert code == 0
    assert "\rworking · 4 chunks" in screen or "\rcompleted · 4 chunks" in screen
    assert "(context" in screen and "[chunks] chunk 1/4chunk 2/4chunk 3/4chunk 4/4" in screen


async def test_a_streamed_answer_is_summed_up_as_one_text(stack: StackFactory) -> None:
    """Chunks appended to one artifact are pieces of one text: the summary after
    the stream shows it whole, on one line (lines of its own indented), while an
    artifact sent whole keeps its parts apart."""
    async def script(ctx: RequestContext, ev: TaskEvents) -> None:
        await ev.working()
        answer = None
        for i, piece in enumerate(["The ", "weather: ", "sunny,\n", "21 °C"]):
            answer = await ev.artifact(piece, artifact_id=answer, name="answer", append=i > 0)
        await ev.artifact([pb.Part(text="one"), pb.Part(text="two")], name="notes")
        await ev.complete()

    url = await expose(await stack(ScriptedAgent(script)))
    code, out, _ = await cli("stream", url, "weather?")
    assert code == 0
    summary = out[out.index("(context"):].splitlines()
    assert summary[1:] == ["  [answer] The weather: sunny,", "    21 °C",
                           "  [notes] one", "  [notes] two"], out


async def test_cancel_subscribe_and_push(url: str) -> None:
    code, out, _ = await cli("send", url, "slow 30", "--no-wait", "--json")
    task_id = json.loads(out)["id"]
    watching = asyncio.ensure_future(cli("subscribe", url, task_id, "--json"))
    await asyncio.sleep(1.0)
    code, out, _ = await cli("push", "set", url, task_id, "https://hooks.example.com/x",
                             "--id", "h1", "--token", "t")
    assert code == 0 and out.startswith(f"config h1 of task {task_id}")
    code, out, _ = await cli("push", "list", url, task_id, "--json")
    assert json.loads(out)["url"] == "https://hooks.example.com/x"
    code, out, _ = await cli("push", "delete", url, task_id, "h1")
    assert code == 0
    code, out, _ = await cli("cancel", url, task_id)
    assert code == 0 and ": canceled" in out
    code, out, _ = await watching
    assert code == 1  # the subscription ended with the task: canceled
    assert json.loads(out.splitlines()[-1])["statusUpdate"]["status"]["state"] == \
        "TASK_STATE_CANCELED"


async def test_files_data_and_failures_render(stack: StackFactory, tmp_path: Path) -> None:
    async def script(ctx: RequestContext, ev: TaskEvents) -> None:
        got = [p.filename or p.WhichOneof("content") for p in ctx.message.parts]
        if ctx.text == "fail":
            await ev.fail("it broke")
            return
        await ev.artifact([pb.Part(raw=b"\x89PNG...", filename="chart.png",
                                   media_type="image/png")], name="chart")
        data = pb.Part()
        data.data.struct_value.update({"received": got, "count": len(got), "ratio": 0.5})
        await ev.artifact([data], name="summary")
        await ev.complete()

    url = await expose(await stack(ScriptedAgent(script)))
    note = tmp_path / "note.txt"
    note.write_text("hi")
    code, out, _ = await cli("send", url, "look", "--file", str(note), "--data", '{"k": 1}',
                             "--out", str(tmp_path / "got"))
    assert code == 0
    assert (tmp_path / "got" / "chart.png").read_bytes() == b"\x89PNG..."
    assert "saved" in out and '"received"' in out and "note.txt" in out
    assert '"count": 3' in out and '"count": 3.0' not in out  # JSON's numbers, not doubles
    assert '"ratio": 0.5' in out
    code, out, _ = await cli("send", url, "fail")
    assert code == 1 and "failed" in out and "it broke" in out


async def test_usage_and_connection_errors(tmp_path: Path) -> None:
    code, _, err = await cli("send", "http://127.0.0.1:9")
    assert code == 2 and "text" in err
    code, _, err = await cli("card", "http://127.0.0.1:9")
    assert code == 4 and "cannot reach" in err
    code, _, err = await cli("send", "http://127.0.0.1:9", "x", "--header", "nocolon")
    assert code != 0 and "NAME:VALUE" in err


@pytest.mark.parametrize("target", ["localhost:9", "ftp://localhost:9/"])
async def test_a_url_without_an_agents_scheme_is_a_usage_error(target: str) -> None:
    code, _, err = await cli("send", target, "hi")
    assert code == 2, err
    assert "begin it with http://" in err and "Traceback" not in err


async def test_ctrl_c_on_a_stream_ends_it_without_a_traceback(url: str) -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "a2a_grpc", "stream", url, "slow 30", cwd=ROOT,
        # PYTHONFAULTHANDLER: if it does not stop, SIGABRT has it say where it is.
        env={**os.environ, "PYTHONPATH": str(ROOT), "PYTHONFAULTHANDLER": "1"},
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    assert proc.stdout is not None
    try:
        first = await asyncio.wait_for(proc.stdout.readline(), 30)
        assert first, "the stream printed nothing"  # its first event is here
        proc.send_signal(signal.SIGINT)  # what the terminal sends on Ctrl-C
        try:
            _, err = await asyncio.wait_for(proc.communicate(), 20)
        except TimeoutError:
            proc.send_signal(signal.SIGABRT)
            _, err = await asyncio.wait_for(proc.communicate(), 10)
            raise AssertionError("still running 20 s after Ctrl-C:\n" + err.decode()) from None
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode == 130, err.decode()
    assert b"Traceback" not in err and b"KeyboardInterrupt" not in err


# A command whose work keeps the cancellation (as a library below it once did).
_STUBBORN = """
import asyncio, sys
from a2a_grpc.client.interrupt import interruptible
async def stubborn():
    print("started", flush=True)
    while True:
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            pass
sys.exit(asyncio.run(interruptible(stubborn())))
"""


async def test_ctrl_c_ends_a_command_that_keeps_the_cancellation() -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", _STUBBORN, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    assert proc.stdout is not None
    try:
        assert await asyncio.wait_for(proc.stdout.readline(), 30) == b"started\n"
        proc.send_signal(signal.SIGINT)
        _, err = await asyncio.wait_for(proc.communicate(), 20)  # INTERRUPT_GRACE_S: 2 s
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode == 130 and b"Traceback" not in err, err.decode()


async def test_exit_statuses_tell_usage_connection_and_refusal_apart(
        url: str, tmp_path: Path) -> None:
    """docs/client.md's statuses: 2 a usage mistake, 4 no agent to talk to, 6 the
    agent's refusal of this request; each with a message, never a traceback."""
    for flags, says in [(("--header", "nocolon"), "NAME:VALUE"),
                        (("--data", "{not json"), "--data is not JSON"),
                        (("--file", str(tmp_path / "absent.txt")), "cannot read")]:
        code, _, err = await cli("send", url, "hi", *flags)
        assert (code, "Traceback" in err) == (2, False) and says in err, err
    code, _, err = await cli("list", url, "--status", "sleepy")
    assert code == 2 and "--status 'sleepy'" in err, err
    for binding in ("grpc", "jsonrpc", "rest"):
        code, _, err = await cli("get", url, "no-such-task", "--binding", binding)
        assert code == 6 and "TaskNotFoundError" in err, (binding, err)
    code, _, err = await cli("cancel", url, "no-such-task")
    assert code == 6, err


@pytest.mark.parametrize("verb", [("get", "t-1"), ("stream", "hi"), ("subscribe", "t-1")])
async def test_a_grpc_server_that_is_down_is_said_at_once(verb: tuple[str, str]) -> None:
    """Not after each retry has waited out --timeout (60 s here: 4 minutes in
    all), and never an empty message."""
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    code, _, err = await cli(verb[0], f"grpc://127.0.0.1:{port}", verb[1], "--timeout", "60")
    assert code == 4 and "cannot reach the A2A server at 127.0.0.1" in err, err


async def test_a_closed_pipe_ends_the_command_quietly(url: str) -> None:
    """`a2a-grpc card URL | head -1`: the reader left; no traceback, no store hint."""
    read, write = os.pipe()
    os.close(read)
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "a2a_grpc", "card", url, cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=write,
        stderr=asyncio.subprocess.PIPE)
    os.close(write)
    _, err = await asyncio.wait_for(proc.communicate(), 60)
    assert (proc.returncode, err.decode()) == (141, "")


async def not_http_listener() -> tuple[asyncio.Server, int]:
    """Something that takes connections and answers, but not in HTTP nor gRPC
    (what an SSH server says first)."""
    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"SSH-2.0-OpenSSH_9.2\r\n")
        await writer.drain()
        await reader.read(65536)
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1]


@pytest.mark.parametrize("verb", [("card",), ("send", "hi")])
@pytest.mark.parametrize("scheme", ["http", "grpc"])
async def test_a_listener_that_is_not_an_agent_is_said_in_one_line(
        verb: tuple[str, ...], scheme: str) -> None:
    """docs/client.md's status 4, a line saying what answered there: not
    aiohttp's traceback, nor "check that it runs" for a server that runs."""
    listener, port = await not_http_listener()
    async with listener:
        code, _, err = await cli(verb[0], f"{scheme}://127.0.0.1:{port}", *verb[1:])
    if scheme == "grpc" and verb[0] == "card":
        return  # grpc:// has no card to read: made from the URL, no call
    assert code == 4 and "Traceback" not in err, err
    if scheme == "http":
        assert "did not answer in HTTP" in err, err
    else:
        assert "makes no gRPC channel" in err and "check that it runs" not in err, err


# Server code: what a client command must not load (the client's own
# translation of 0.3, the card's types and the servicer's names are shared).
SERVER = ("a2a_grpc.handler", "a2a_grpc.execution", "a2a_grpc.stores", "a2a_grpc.bus",
          "a2a_grpc.push", "a2a_grpc.bridge", "a2a_grpc.pyvoy", "a2a_grpc.adapters",
          "a2a_grpc.demos", "a2a_grpc.grpc_edge.server", "a2a_grpc.app.serve",
          "a2a_grpc.app.assembly", "a2a_grpc.app.workers", "a2a_grpc.app.settings",
          "a2a_grpc.app.http", "a2a_grpc.auth", "a2a_grpc.observe.metrics")
_IMPORTED = """
import sys
from a2a_grpc.app.entry import main
sys.argv[0] = "a2a-grpc"
try:
    code = main()
except SystemExit as exc:
    code = exc.code
print("\\n".join(sorted(m for m in sys.modules if m.startswith("a2a_grpc"))))
sys.exit(code or 0)
"""


@pytest.mark.parametrize("args", [("--help",), ("--version",), ("send", "--help"),
                                  ("get", "grpc://127.0.0.1:9", "t-1"),
                                  ("card", "http://127.0.0.1:9")])
async def test_client_commands_load_no_server_code(args: tuple[str, ...]) -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", _IMPORTED, *args, cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    loaded = [m for m in out.decode().split() if m.startswith("a2a_grpc")]
    assert "a2a_grpc.app.cli" in loaded, (out, err)
    server = [m for m in loaded if m.startswith(SERVER)]
    assert server == [], server


@pytest.mark.parametrize("after", [0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.45, 0.6, 0.8, 1.0])
async def test_ctrl_c_at_any_moment_of_a_client_command(after: float) -> None:
    """While Python starts, while the client loads, while it waits on an
    agent that does not answer: status 130 and no traceback, wherever the
    signal lands (`after` s from the start spreads it over those moments)."""
    with socket.socket() as silent:  # takes connections, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        port = silent.getsockname()[1]
        # The client as a terminal starts it, whatever started this test: a
        # program run in the background of a script (`make test &`) inherits
        # SIGINT ignored, and so would the client, which Ctrl-C then cannot
        # stop. A handler here, not SIG_IGN, leaves the client SIGINT's default.
        previous = signal.signal(signal.SIGINT, signal.default_int_handler)
        try:
            proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "a2a_grpc", "send", f"http://127.0.0.1:{port}", "hi",
                cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        finally:
            signal.signal(signal.SIGINT, previous)
        try:
            await asyncio.sleep(after)  # the moment is the test's input, not a wait for it
            proc.send_signal(signal.SIGINT)
            _, err = await asyncio.wait_for(proc.communicate(), 20)
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
    # Before Python has set its handler (the first milliseconds), SIGINT ends it
    # as it ends any program: a shell says 130 for both. While Python itself
    # starts (site, runpy finding the package), before any line of ours runs,
    # the traceback is Python's own, and Python then ends by the signal too
    # (-SIGINT; 1 on an older Python); from the package's first line on, none.
    assert proc.returncode in (130, -signal.SIGINT, 1), err.decode()
    if b"Traceback" in err or proc.returncode == 1:
        assert b"KeyboardInterrupt" in err and b"/a2a_grpc/" not in err, err.decode()
