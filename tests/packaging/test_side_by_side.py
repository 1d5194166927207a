"""Our wheel beside the official SDK, in one virtualenv and one process
(a2a_grpc.core.published): its 1.x line (which registers `lf.a2a.v1`, as
ADK's, Microsoft's and CrewAI's A2A support bring it) and its 0.3 line
(`a2a.v1`, as Strands' [a2a] extra brings it). Each import order; the SDK's
client calling our server and ours calling the SDK's, on every binding; our
reflection still describing `lf.a2a.v1`; well-known types shared; `pip
check` clean. The scripts (tests/interop/peers/side_by_side*.py) run from a
folder that is not the repository."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.packaging.installed import ROOT, run

PEERS = ROOT / "tests" / "interop" / "peers"
ORDERS = ("sdk-first", "ours-first")


def script(name: str, into: Path) -> Path:
    """The peer script (and the helper it imports), copied out of the repository:
    nothing of ours but the wheel."""
    shutil.copy(PEERS / "ours_in_process.py", into / "ours_in_process.py")
    copy = into / name
    shutil.copy(PEERS / name, copy)
    return copy


@pytest.mark.parametrize("order", ORDERS)
def test_beside_the_sdk(with_sdk: Path, tmp_path: Path, order: str) -> None:
    seen = json.loads(run(with_sdk, script("side_by_side.py", tmp_path), order,
                          cwd=tmp_path).strip().splitlines()[-1])
    assert seen["distinct_classes"]
    assert seen["packages"] == ["a2a_grpc.lf.a2a.v1.Task", "lf.a2a.v1.Task"]
    for binding, transport in (("JSONRPC", "JsonRpcTransport"), ("HTTP+JSON", "RestTransport"),
                               ("GRPC", "GrpcTransport")):
        assert seen["sdk_calls_ours"][binding] == ["TASK_STATE_COMPLETED", "echo: hello",
                                                   transport]
        assert seen["ours_calls_sdk"][binding] == ["TASK_STATE_COMPLETED", "sdk: hi", binding]
    reflection = seen["reflection"]
    assert {"lf.a2a.v1.A2AService", "a2a.v1.A2AService"} <= set(reflection["services"])
    assert "lf.a2a.v1" in reflection["packages"]
    assert not any(p.startswith("a2a_grpc") for p in reflection["packages"])
    assert not any(s.startswith("a2a_grpc") for s in reflection["services"])
    known = seen["well_known"]
    assert known["same_struct_class"] and known["bytes_equal"]
    assert known["ours"] == {"k": "v", "n": 1.0, "more": True}
    assert known["sdk"] == {"k": "v", "n": 1.0} and known["status_seconds"] == 1_700_000_000


@pytest.mark.parametrize("order", ORDERS)
def test_beside_the_sdk_03(with_sdk03: Path, tmp_path: Path, order: str) -> None:
    seen = json.loads(run(with_sdk03, script("side_by_side03.py", tmp_path), order,
                          cwd=tmp_path).strip().splitlines()[-1])
    assert seen["packages"] == ["a2a_grpc.a2a.v1.Task", "a2a.v1.Task"]
    assert seen["bytes_equal"]
    for transport in ("JSONRPC", "HTTP+JSON", "GRPC"):
        assert seen["sdk_calls_ours"][transport] == ["completed", "echo: hello"]
    assert seen["ours_calls_sdk"] == ["TASK_STATE_COMPLETED", "sdk 0.3: hi", "0.3.0"]


@pytest.mark.parametrize("which", ["1.x", "0.3"])
def test_pip_check_is_clean(with_sdk: Path, with_sdk03: Path, tmp_path: Path,
                            which: str) -> None:
    python = with_sdk if which == "1.x" else with_sdk03
    assert "No broken requirements" in run(python, "-m", "pip", "check", cwd=tmp_path)
