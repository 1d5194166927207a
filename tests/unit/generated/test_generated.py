"""generated/ must be what `make proto` makes from proto/ today.

The descriptor embedded in generated/a2a_pb2.py (and a2a_v03_pb2.py), as
published (its private package renamed back: a2a_grpc.core.published), is
compared with a fresh compile of proto/a2a.proto (a2a_v03.proto), so an
edit to a proto without `make proto` fails here. When the installed
grpcio-tools is the one that produced the committed files, the regenerated
files must also match byte for byte.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

import google.api
import pytest
from google.protobuf import descriptor_pb2
from google.protobuf.descriptor import FileDescriptor

from a2a_grpc.core.published import PREFIX, private_source, published_file
from a2a_grpc.generated import a2a_pb2, a2a_v03_pb2

ROOT = Path(__file__).resolve().parents[3]
OUT = Path("a2a_grpc", "generated")  # where protoc writes, given `-I a2a_grpc/generated=proto`
GOOGLEAPIS = str(Path(next(iter(google.api.__path__))).parent.parent)


PROTOS = [("a2a", a2a_pb2.DESCRIPTOR), ("a2a_v03", a2a_v03_pb2.DESCRIPTOR)]


def _protoc(*args: str, cwd: Path, name: str = "a2a", protos: Path = ROOT / "proto") -> None:
    cmd = [sys.executable, "-m", "grpc_tools.protoc", f"-Ia2a_grpc/generated={protos}",
           f"-I{GOOGLEAPIS}", *args, str(protos / f"{name}.proto")]
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"protoc failed: {done.stderr}"


@pytest.mark.parametrize(("name", "embedded"), PROTOS)
def test_embedded_descriptor_matches_proto_source(
        tmp_path: Path, name: str, embedded: FileDescriptor) -> None:
    out = tmp_path / "a2a.pb"
    _protoc(f"--descriptor_set_out={out}", cwd=tmp_path, name=name)
    fresh = descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes()).file[0]
    _drop_json_names(fresh.message_type)  # derived from names; not embedded in a2a_pb2
    assert embedded.package.startswith(PREFIX)  # private: beside the official SDK's
    committed = published_file(embedded)
    _drop_json_names(committed.message_type)  # embedded only where set explicitly
    assert committed.name == fresh.name == f"a2a_grpc/generated/{name}.proto"
    assert committed == fresh, "generated/ is stale: run `make proto` and commit the result"


def _drop_json_names(messages: Iterable[descriptor_pb2.DescriptorProto]) -> None:
    for m in messages:
        for f in m.field:
            f.ClearField("json_name")
        _drop_json_names(m.nested_type)


@pytest.mark.parametrize("name", [n for n, _ in PROTOS])
def test_regenerated_files_are_identical_with_the_same_tools(tmp_path: Path, name: str) -> None:
    private = tmp_path / "private"
    private.mkdir()
    (private / f"{name}.proto").write_text(private_source(
        (ROOT / "proto" / f"{name}.proto").read_text()))
    _protoc("--python_out=.", "--pyi_out=.", cwd=tmp_path, name=name, protos=private)
    _protoc("--grpc_python_out=.", cwd=tmp_path, name=name)
    committed_py = (ROOT / "generated" / f"{name}_pb2.py").read_text()
    fresh_py = (tmp_path / OUT / f"{name}_pb2.py").read_text()
    version = re.compile(r"^# Protobuf Python Version: (.*)$", re.M)
    same_tools = version.findall(committed_py) == version.findall(fresh_py)
    if not same_tools and os.environ.get("CI") != "true":
        return  # another grpcio-tools formats differently; the descriptor test still ran
    for file in (f"{name}_pb2.py", f"{name}_pb2.pyi", f"{name}_pb2_grpc.py"):
        committed = (ROOT / "generated" / file).read_text()
        assert committed == (tmp_path / OUT / file).read_text(), (
            f"generated/{file} differs from a fresh `make proto`: run it and commit the result"
        )
