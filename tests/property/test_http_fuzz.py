"""Whatever JSON a client sends, the bridge answers with a documented error or a
result: never an internal error, never a 500, and the server stays up."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from a2a_grpc.methods import METHODS
from tests.conftest import StackFactory

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2**63, 2**63) | st.floats(allow_nan=False)
    | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner,
                                                                 max_size=4),
    max_leaves=20,
)
field_names = st.sampled_from(["message", "messageId", "role", "parts", "text", "id", "taskId",
                               "contextId", "pageSize", "status", "historyLength", "url",
                               "configuration", "metadata", "tenant", "data", "raw"])
params = st.dictionaries(field_names, json_values | st.dictionaries(field_names, json_values),
                         max_size=5)
methods = st.sampled_from([*sorted(METHODS), "Nope", ""])
KNOWN = {-32700, -32600, -32601, -32602, -32001, -32002, -32003, -32004, -32005, -32007,
         -32008, -32009}
SETTINGS = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])


@SETTINGS
@given(method=methods, body=params)
async def test_jsonrpc_never_fails_internally(stack: StackFactory, method: str,
                                              body: dict[str, Any]) -> None:
    s = await stack(push=True)
    if METHODS.get(method) and METHODS[method].streaming:
        method = "GetTask"  # streams are covered elsewhere; keep each example quick
    payload = {"jsonrpc": "2.0", "id": 1, "method": method, "params": body}
    async with s.session.post(s.base_url + "/", data=json.dumps(payload)) as resp:
        assert resp.status == 200
        answer = await resp.json()
    if "error" in answer:
        assert answer["error"]["code"] in KNOWN, answer


@SETTINGS
@given(method=st.sampled_from(sorted(m for m in METHODS if not METHODS[m].streaming)),
       body=params)
async def test_rest_never_fails_internally(stack: StackFactory, method: str,
                                           body: dict[str, Any]) -> None:
    s = await stack(push=True)
    route = METHODS[method].routes[0]
    path = route.template
    for name in route.path_fields:
        path = path.replace(f"{{{name}=*}}", "x1").replace(f"{{{name}}}", "x1")
    if route.verb in ("GET", "DELETE"):
        query = {k: json.dumps(v) if not isinstance(v, str) else v for k, v in body.items()}
        ctx = s.session.request(route.verb, s.base_url + path, params=query)
    else:
        ctx = s.session.request(route.verb, s.base_url + path, data=json.dumps(body))
    async with ctx as resp:
        assert resp.status < 500, await resp.text()
