"""The JSON-RPC 2.0 binding (spec §9): one POST endpoint, methods = RPC names.

- Errors travel as HTTP 200 with a JSON-RPC error object (the official
  clients map them by numeric code): -32700 bad JSON, -32600 not a request
  (or a body over the size limit), -32601 unknown method, -32602 bad params
  (with a BadRequest), -32603 internal (fixed message), -32001..-32009 the A2A
  errors. `data` is the list of google.rpc details: ErrorInfo first.
- Streaming methods answer `text/event-stream`: each event a JSON-RPC
  response with the request's id; an error after the start is the last
  event. An error before the first event (TaskNotFound, a terminal task's
  SubscribeToTask, a refused message) is a plain JSON-RPC error response, as
  the official SDK's server answers and its clients and the 1.0 conformance
  kit expect; 0.3's and the first draft's streaming methods still answer it
  as a stream of that one error, as their clients read it.
- Batches run member by member; a streaming method inside a batch gets
  -32600 for that member. Notifications (no id) run and get no answer.
"""

from __future__ import annotations

from typing import Any

from a2a_grpc.bridge import codec, sse
from a2a_grpc.bridge.calls import call_context, note, refusal_headers
from a2a_grpc.bridge.face import Answer, BodyTooLarge, Incoming, Response, Streamed
from a2a_grpc.bridge.legacy.methods03 import LegacyMethod
from a2a_grpc.bridge.legacy.routing import context_for, resolve
from a2a_grpc.core.contract import A2AService
from a2a_grpc.core.errors import (
    A2AError,
    InvalidParamsError,
    InvalidRequestError,
    MethodNotFoundError,
    ParseError,
    PermissionDeniedError,
    ResourceExhaustedError,
    UnauthenticatedError,
    UnavailableError,
    public,
    wire_of,
)
from a2a_grpc.core.methods import METHODS

JSON_TYPE = "application/json"
_NO_ID = object()


def error_object(exc: BaseException) -> dict[str, Any]:
    err = public(exc)
    _, status = codec.error_details(err)
    return {"code": wire_of(err).jsonrpc, "message": err.message, "data": status["details"]}


def reply(id_: Any, *, result: Any = None, error: BaseException | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"jsonrpc": "2.0", "id": None if id_ is _NO_ID else id_}
    if error is not None:
        out["error"] = error_object(error)
    else:
        out["result"] = result
    return out


class JsonRpcEndpoint:
    def __init__(
        self, service: A2AService, *, max_body: int, max_depth: int, keepalive: float
    ) -> None:
        self.service = service
        self.max_body = max_body
        self.max_depth = max_depth
        self.keepalive = keepalive

    async def handle(self, request: Incoming) -> Response:
        try:
            body = await request.read()
        except BodyTooLarge:
            return _json(reply(_NO_ID, error=InvalidRequestError(
                f"request body over {self.max_body} bytes; send less (e.g. files as URLs)")))
        try:
            payload = codec.loads(body, self.max_depth)
        except ParseError as exc:
            return _json(reply(_NO_ID, error=exc))
        if isinstance(payload, list):
            return await self._batch(payload, request)
        answer = await self._one(payload, request, in_batch=False)
        if isinstance(answer, Answer | Streamed):
            return answer
        return Answer(204) if answer is None else _json(answer)

    async def _batch(self, items: list[Any], request: Incoming) -> Answer:
        if not items:
            return _json(reply(_NO_ID, error=InvalidRequestError("empty batch")))
        answers = []
        for item in items:
            answer = await self._one(item, request, in_batch=True)
            assert not isinstance(answer, Answer | Streamed)
            if answer is not None:
                answers.append(answer)
        return _json(answers) if answers else Answer(204)

    async def _one(
        self, obj: Any, request: Incoming, *, in_batch: bool
    ) -> dict[str, Any] | Response | None:
        id_ = obj.get("id", _NO_ID) if isinstance(obj, dict) else None
        try:
            method_name, params = _check_request(obj)
        except A2AError as exc:
            return reply(None if id_ is _NO_ID else id_, error=exc)
        if not (id_ is _NO_ID or id_ is None or isinstance(id_, str | int)) or isinstance(
                id_, bool):
            return reply(None, error=InvalidRequestError("id must be a string, number or null"))
        legacy = resolve(method_name, lambda: call_context(request).version)
        if legacy is not None:
            return await self._legacy(legacy, id_, params, request, in_batch, method_name)
        try:
            method = METHODS.get(method_name)
            if method is None:
                raise MethodNotFoundError(f"method {method_name!r} does not exist")
            if method.streaming and in_batch:
                raise InvalidRequestError(
                    f"{method_name} streams its answer: send it on its own, not in a batch")
            call = getattr(self.service, method.attr)
            if method.streaming:
                if id_ is _NO_ID:
                    return None  # a notification can't receive a stream
                try:
                    events = await call(codec.parse(params, method.request),
                                        call_context(request))
                except Exception as exc:
                    note(exc, f"JSON-RPC {method_name}")
                    return _refused(id_, exc) or reply(id_, error=exc)
                return sse.stream(
                    events,
                    render=lambda ev, kept: reply(id_, result=codec.printed_event(ev, kept)),
                    render_error=lambda exc: (reply(id_, error=_noted(exc, method_name)), None),
                    keepalive=self.keepalive)
            result = await call(codec.parse(params, method.request), call_context(request))
        except Exception as exc:
            note(exc, f"JSON-RPC {method_name}")
            refused = None if in_batch else _refused(id_, exc)
            return refused or (None if id_ is _NO_ID else reply(id_, error=exc))
        return None if id_ is _NO_ID else reply(id_, result=codec.rendered(result))


    async def _legacy(self, legacy: LegacyMethod, id_: Any, params: Any,
                      request: Incoming, in_batch: bool, name: str,
                      ) -> dict[str, Any] | Response | None:
        """A 0.3 or first-draft method: params translated in, the 1.0 RPC, the result out."""
        method = METHODS[legacy.rpc]
        try:
            if method.streaming and in_batch:
                raise InvalidRequestError(
                    f"{name} streams its answer: send it on its own, not in a batch")
            if method.streaming and id_ is _NO_ID:
                return None  # a notification can't receive a stream
            ctx = context_for(call_context(request), legacy)
            req = codec.parse(legacy.params(_params_object(params)), method.request)
            answer = await getattr(self.service, method.attr)(req, ctx)
        except Exception as exc:
            note(exc, f"JSON-RPC {name}")
            refused = None if in_batch else _refused(id_, exc)
            if refused is not None:
                return refused
            if method.streaming and id_ is not _NO_ID and not in_batch:
                return sse.one_error(reply(id_, error=exc))
            return None if id_ is _NO_ID else reply(id_, error=exc)
        if method.streaming:
            render = legacy.renderer()
            return sse.stream(
                answer,
                render=lambda ev, _: reply(id_, result=render(codec.to_dict(ev))),
                render_error=lambda exc: (reply(id_, error=_noted(exc, name)), None),
                keepalive=self.keepalive)
        return None if id_ is _NO_ID else reply(
            id_, result=legacy.result(codec.to_dict(answer)))


def _params_object(params: Any) -> dict[str, Any]:
    if not isinstance(params, dict):
        raise InvalidParamsError("params must be a JSON object")
    return params


def _noted(exc: BaseException, method: str) -> BaseException:
    note(exc, f"JSON-RPC {method} stream")
    return exc


def _check_request(obj: Any) -> tuple[str, Any]:
    if not isinstance(obj, dict):
        raise InvalidRequestError("a JSON-RPC request must be a JSON object")
    if obj.get("jsonrpc") != "2.0":
        raise InvalidRequestError('"jsonrpc" must be exactly "2.0"')
    method = obj.get("method")
    if not isinstance(method, str):
        raise InvalidRequestError('"method" must be a string')
    params = obj.get("params", {})
    if isinstance(params, list):
        raise InvalidParamsError("A2A methods take named params: send a JSON object")
    return method, params


def _refused(id_: Any, exc: BaseException) -> Answer | None:
    """A call refused for its credentials is refused by HTTP too (401 with
    WWW-Authenticate, 403), the JSON-RPC error in the body, as §3.3.2 asks;
    so is one refused by a limit (429 with Retry-After), and one refused by a
    server shutting down (503 with Retry-After, which a balancer may retry
    on another replica)."""
    if not isinstance(exc, UnauthenticatedError | PermissionDeniedError
                      | ResourceExhaustedError) and type(exc) is not UnavailableError:
        return None
    return codec.json_response(reply(None if id_ is _NO_ID else id_, error=exc), JSON_TYPE,
                               wire_of(exc).http, refusal_headers(exc))


def _json(data: Any) -> Answer:
    return codec.json_response(data, JSON_TYPE)
