"""The contract from the installed wheel, in other languages: `a2a-grpc proto
--out DIR`, then each toolchain's own protoc plugins build the Go, C++ and
Node.js clients of examples/clients/, which must pass their checks against
`serve` from the same wheel.

A missing toolchain skips its client with the packages to install, except
under CI (CI=true), where .ci/run installs them and a skip would hide a
broken example: there it fails.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from tests.packaging.installed import ROOT, once, run, serving
from tools.kits import one_maker

EXAMPLES = ROOT / "examples" / "clients"
GOCODE = Path("/usr/share/gocode/src")  # Debian's Go libraries (GOPATH mode, no network)
NODE_CACHE = ROOT / ".interop" / "examples-node"


def expected(language: str) -> list[str]:
    """What every example prints: the same four checks, in the same words."""
    return [f"send TASK_STATE_COMPLETED echo: hello from {language}",
            "stream task TASK_STATE_WORKING artifact artifact TASK_STATE_COMPLETED",
            "get TASK_STATE_COMPLETED",
            "unknown NotFound"]


def need(tools: list[str], paths: list[Path], install: str) -> None:
    missing = [t for t in tools if shutil.which(t) is None] + [str(p) for p in paths
                                                               if not p.exists()]
    if missing:
        message = f"{', '.join(missing)} not found: {install}"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)


@pytest.fixture(scope="module")
def protos(installed: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The proto files, as the installed wheel writes them."""
    _, python = installed
    out = tmp_path_factory.mktemp("protos")
    run(python, "-m", "a2a_grpc", "proto", "--out", out, cwd=out)
    return out


@pytest_asyncio.fixture(loop_scope="module", scope="module", params=["grpc.aio", "pyvoy"])
async def target(request: pytest.FixtureRequest,
                 tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[str]:
    """HOST:PORT of `serve` (the demo agent) from the installed wheel, its gRPC
    on each carrier (pyvoy: the wheel installed with its extra)."""
    carrier = request.param
    python = (request.getfixturevalue("installed")[1] if carrier == "grpc.aio"
              else request.getfixturevalue("installed_pyvoy"))
    async with serving(python, tmp_path_factory.mktemp("serve"), "--store", "memory",
                       "--grpc-carrier", carrier) as (grpc_port, _):
        yield f"127.0.0.1:{grpc_port}"


async def client_says(*cmd: str | Path, cwd: Path) -> list[str]:
    """What `cmd` printed (a client's run: two minutes at most)."""
    done = await asyncio.to_thread(subprocess.run, [str(c) for c in cmd], cwd=cwd,
                                   capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, f"{cmd}: {done.stdout}\n{done.stderr[-3000:]}"
    return done.stdout.splitlines()


@pytest.fixture(scope="module")
def go_client(protos: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Go client, built once a run (installed.once) for both carriers."""
    install = ("apt-get install golang-go protobuf-compiler protoc-gen-go protoc-gen-go-grpc "
               "golang-google-grpc-dev golang-google-protobuf-dev golang-google-genproto-dev "
               "golang-github-golang-protobuf-1-5-dev")
    need(["go", "protoc", "protoc-gen-go", "protoc-gen-go-grpc"],
         [GOCODE / "google.golang.org" / "grpc", GOCODE / "google.golang.org" / "genproto"],
         install)

    def build(home: Path) -> str:
        gopath = home / "gopath"
        app = gopath / "src" / "a2aclient"
        app.mkdir(parents=True)
        shutil.copy(EXAMPLES / "go" / "main.go", app)
        # go_package in a2a.proto is google.golang.org/lf/a2a/v1: the stubs go there.
        run("protoc", f"-I{protos}", f"--go_out={gopath / 'src'}",
            f"--go-grpc_out={gopath / 'src'}", protos / "a2a.proto", cwd=home)
        env = {**os.environ, "GO111MODULE": "off", "GOPATH": f"{gopath}:{GOCODE.parent}",
               "GOCACHE": str(home / "gocache"), "GOFLAGS": ""}
        built(["go", "build", "-o", str(home / "client"), "."], app, env)
        return str(home / "client")

    return Path(once(tmp_path_factory, "go-client", build))


@pytest.fixture(scope="module")
def cpp_client(protos: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The C++ client, built once a run (installed.once) for both carriers."""
    need(["protoc", "grpc_cpp_plugin", "pkg-config", "g++", "make"],
         [Path("/usr/include/grpcpp/grpcpp.h")],
         "apt-get install protobuf-compiler-grpc libgrpc++-dev libprotobuf-dev pkg-config")

    def build(home: Path) -> str:
        shutil.copytree(EXAMPLES / "cpp", home / "cpp")
        built(["make", "-s", f"PROTOS={protos}"], home / "cpp", dict(os.environ))
        return str(home / "cpp" / "client")

    return Path(once(tmp_path_factory, "cpp-client", build))


def built(cmd: list[str], cwd: Path, env: dict[str, str]) -> None:
    """A build, which may take minutes on a busy machine."""
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=540,
                          check=False, env=env)
    assert done.returncode == 0, f"{cmd}: {done.stdout}\n{done.stderr[-3000:]}"


@pytest.mark.asyncio(loop_scope="module")
async def test_go_client(go_client: Path, target: str, tmp_path: Path) -> None:
    assert await client_says(go_client, target, cwd=tmp_path) == expected("go")


@pytest.mark.asyncio(loop_scope="module")
async def test_cpp_client(cpp_client: Path, target: str, tmp_path: Path) -> None:
    assert await client_says(cpp_client, target, cwd=tmp_path) == expected("c++")


@pytest.fixture(scope="module")
def node_client_modules() -> Path:
    """The Node client's node_modules (.interop/examples-node, npm install on
    first use; one process at a time: tools/kits.py `one_maker`)."""
    need(["node", "npm"], [], "apt-get install nodejs npm")
    package = (EXAMPLES / "node" / "package.json").read_text()
    done = NODE_CACHE / "installed"  # written once npm install has succeeded
    with one_maker("examples-node"):
        if not done.exists() or done.read_text() != package:
            NODE_CACHE.mkdir(parents=True, exist_ok=True)
            shutil.copy(EXAMPLES / "node" / "package.json", NODE_CACHE / "package.json")
            built(["npm", "install", "--no-audit", "--no-fund", "--silent"], NODE_CACHE,
                  dict(os.environ))
            done.write_text(package)
    return NODE_CACHE / "node_modules"


@pytest.mark.asyncio(loop_scope="module")
async def test_node_client(node_client_modules: Path, protos: Path, target: str,
                           tmp_path: Path) -> None:
    app = tmp_path / "node"
    app.mkdir()
    shutil.copy(EXAMPLES / "node" / "client.js", app)
    (app / "node_modules").symlink_to(node_client_modules)
    lines = await client_says("node", "client.js", target, protos, cwd=app)
    assert lines == expected("node")
