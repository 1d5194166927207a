"""Whatever a client sends over HTTP (JSON-RPC bodies, REST paths, query
strings, headers), the bridge answers with a documented error or a result:
never a 5xx for the client's mistake, never a traceback or internal detail,
and the next well-formed call is answered correctly.
`A2A_FUZZ_EXAMPLES=100000` runs the long version (README, "Fuzzing")."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from a2a_grpc.bridge.legacy import methods01 as v01_methods
from a2a_grpc.bridge.legacy import methods03 as v03_methods
from a2a_grpc.core.methods import METHODS
from tests.conftest import StackFactory
from tests.property.fuzzing import LEAKS, SETTINGS, one_stack, still_answers

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats(allow_nan=False)
    | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner,
                                                                 max_size=4),
    max_leaves=20,
)
field_names = st.sampled_from(["message", "messageId", "role", "parts", "text", "id", "taskId",
                               "contextId", "pageSize", "status", "historyLength", "url",
                               "configuration", "metadata", "tenant", "data", "raw", "kind"])
params = st.dictionaries(field_names, json_values | st.dictionaries(field_names, json_values),
                         max_size=5)
methods = st.sampled_from([*sorted(METHODS), "message/send", "tasks/get", "tasks/send",
                           "tasks/pushNotificationConfig/set", "Nope", ""])
KNOWN = {-32700, -32600, -32601, -32602, -32001, -32002, -32003, -32004, -32005, -32007,
         -32008, -32009}
# Path pieces clients get wrong: ids with odd characters, verbs, tenants, 0.3's /v1.
segments = st.sampled_from(["tasks", "message:send", "message:stream", "v1", "x1", ":cancel",
                            ":subscribe", "pushNotificationConfigs", "card", "extendedAgentCard",
                            "%00", "%ff", "..", "", "a" * 300, "tasks:x", "é"]) | st.text(
    alphabet=st.characters(blacklist_categories=["Cs"]), max_size=12)
header_names = st.sampled_from(["A2A-Version", "A2A-Extensions", "Last-Event-ID", "Content-Type",
                                "Authorization", "X-API-Key", "Cookie", "Accept",
                                "Content-Encoding", "Transfer-Encoding"])
header_values = st.sampled_from(["", "1.0", "0.3", "99", "-1", "99999999999999999999",
                                 "application/json", "text/event-stream", "gzip", "Bearer x",
                                 "Basic %%%", "a=b; c", "1.0, 0.3", "\u00e9"]) | st.text(
    alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=30)
headers = st.dictionaries(header_names, header_values, max_size=3)


def _clean(text: str) -> None:
    assert not LEAKS.search(text), text[:2000]


@SETTINGS
@given(method=methods, body=params, head=headers)
async def test_jsonrpc_never_fails_internally(stack: StackFactory, method: str,
                                              body: dict[str, Any], head: dict[str, str]) -> None:
    s = await one_stack(stack)
    if METHODS.get(method) and METHODS[method].streaming:
        method = "GetTask"  # streams are covered elsewhere; keep each example quick
    head = {k: v for k, v in head.items() if k not in ("Transfer-Encoding", "Content-Encoding",
                                                        "Accept")}
    payload = {"jsonrpc": "2.0", "id": 1, "method": method, "params": body}
    async with s.session.post(s.base_url + "/", data=json.dumps(payload), headers=head) as resp:
        text = await resp.text()
        assert resp.status < 500, text
        _clean(text)
    answer = json.loads(text)
    if "error" in answer:
        assert answer["error"]["code"] in KNOWN, answer
    await still_answers(s)


@SETTINGS
@given(method=st.sampled_from(sorted(m for m in METHODS if not METHODS[m].streaming)),
       body=params)
async def test_rest_bodies_and_queries_never_fail_internally(
        stack: StackFactory, method: str, body: dict[str, Any]) -> None:
    s = await one_stack(stack)
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
        text = await resp.text()
        assert resp.status < 500, text
        _clean(text)
    await still_answers(s)


@SETTINGS
@given(verb=st.sampled_from(["GET", "POST", "DELETE", "PUT", "PATCH", "OPTIONS"]),
       path=st.lists(segments, min_size=1, max_size=5),
       query=st.lists(st.tuples(st.sampled_from(["historyLength", "pageSize", "pageToken",
                                                 "contextId", "status", "a2a-version",
                                                 "statusTimestampAfter", "includeArtifacts",
                                                 "api_key", "tenant", ""]), header_values),
                      max_size=4),
       head=headers, body=st.none() | st.binary(max_size=64) | params.map(
           lambda p: json.dumps(p).encode()))
async def test_any_path_query_and_headers(stack: StackFactory, verb: str, path: list[str],
                                          query: list[tuple[str, str]], head: dict[str, str],
                                          body: bytes | None) -> None:
    s = await one_stack(stack)
    head = {k: v for k, v in head.items() if k not in ("Transfer-Encoding", "Content-Encoding")}
    url = s.base_url + "/" + "/".join(path)
    async with s.session.request(verb, url, params=query, headers=head, data=body,
                                 allow_redirects=False) as resp:
        text = await resp.text(errors="replace")
        if "event-stream" in resp.headers.get("Content-Type", ""):
            text = text[:4000]
        assert resp.status < 500, (resp.status, text[:2000])
        _clean(text)
    await still_answers(s)


every_method = st.sampled_from([*sorted(METHODS), *sorted(v03_methods.METHODS),
                                *sorted(v01_methods.METHODS), "Nope", ""])
batch_member = st.fixed_dictionaries(
    {"jsonrpc": st.just("2.0"), "method": every_method, "params": params},
    optional={"id": st.none() | st.integers(0, 9) | st.text(max_size=4)}) | json_values


@SETTINGS
@given(members=st.lists(batch_member, min_size=1, max_size=4), head=headers)
async def test_jsonrpc_batches_of_every_method_and_dialect(
        stack: StackFactory, members: list[Any], head: dict[str, str]) -> None:
    """A batch answers 200 (or 204 when all are notifications) with one JSON
    object per member that has an id, streaming methods of every dialect
    included (they get -32600 there), never a 5xx."""
    s = await one_stack(stack)
    head = {k: v for k, v in head.items() if k not in ("Transfer-Encoding", "Content-Encoding",
                                                        "Accept")}
    async with s.session.post(s.base_url + "/", data=json.dumps(members), headers=head) as resp:
        text = await resp.text()
        assert resp.status < 500, text
        _clean(text)
        assert "event-stream" not in resp.headers.get("Content-Type", ""), text[:2000]
    if resp.status == 200 and text:
        answers = json.loads(text)
        for answer in answers if isinstance(answers, list) else [answers]:
            if "error" in answer:
                assert answer["error"]["code"] in KNOWN, answer
    await still_answers(s)
