"""examples/hops_extension.py through two hops: two `serve` processes, the
front agent passing on the extensions it was asked for; the record comes
back only when the client asked for it, and each response names the
extension as activated."""

from __future__ import annotations

import pytest

from a2a_grpc.client import A2AClient, ClientOptions
from examples.hops_extension import HOPS
from tests.processes import reap, start_server


@pytest.mark.parametrize("binding", ["GRPC", "JSONRPC", "HTTP+JSON"])
async def test_the_record_goes_through_two_hops(monkeypatch: pytest.MonkeyPatch,
                                                binding: str) -> None:
    monkeypatch.setenv("HOP_NAME", "back")
    back = await start_server("serve", "--store", "memory", "--agent",
                              "examples.hops_extension:Hops")
    try:
        monkeypatch.setenv("HOP_NAME", "front")
        monkeypatch.setenv("HOP_NEXT", back.url)
        front = await start_server("serve", "--store", "memory", "--agent",
                                   "examples.hops_extension:Hops")
        try:
            asking = await A2AClient.connect(front.url, ClientOptions(
                prefer=[binding], extensions=[HOPS]))
            plain = await A2AClient.connect(front.url, ClientOptions(prefer=[binding]))
            try:
                recorded = await asking.send_text("where to?")
                assert asking.activated() == (HOPS,)
                unrecorded = await plain.send_text("where to?")
                assert plain.activated() == ()
            finally:
                await asking.close()
                await plain.close()
        finally:
            reap(front.proc)
    finally:
        reap(back.proc)
    artifact = recorded.task.artifacts[0]
    assert artifact.parts[0].text == "front: back: where to?"
    hops = artifact.metadata.fields["hops"].list_value.values
    assert [v.string_value for v in hops] == ["front", "back"]
    assert unrecorded.task.artifacts[0].parts[0].text == "front: back: where to?"
    assert not unrecorded.task.artifacts[0].HasField("metadata")
