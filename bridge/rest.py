"""The HTTP+JSON binding (spec §11): routes from the proto's `google.api.http` rules.

- Both route forms, plain and `/{tenant}/...`; path values go into the
  request message (`tenant`, `id`, `task_id`), winning over the body.
- Bodies (`body: "*"`) are the request as ProtoJSON; GET and DELETE take the
  request's fields as camelCase query parameters (§11.5): enum names,
  booleans, numbers, timestamps; a repeated field may be given many times.
  Unknown parameters are ignored (§5.7), ill-typed ones are InvalidParams.
- `SubscribeToTask` answers GET (the proto) and POST (the prose, and the
  official clients).
- Success: 200 `application/a2a+json`. Errors: the §5.4 HTTP status with a
  `google.rpc.Status` body, `{"error": {code, status, message, details}}`,
  whose ErrorInfo `reason` the official clients map back to the error type.
- Streams: SSE, `id:` = event sequence number; an error after the start is
  sent as a final `event: error` carrying the same error body.
"""

from __future__ import annotations

from typing import Any

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message
from google.rpc import code_pb2

from a2a_grpc.bridge import codec, sse
from a2a_grpc.bridge.calls import call_context, note, refusal_headers
from a2a_grpc.bridge.face import Answer, BodyTooLarge, Handler, Incoming, Response
from a2a_grpc.core.contract import A2AService
from a2a_grpc.core.errors import (
    FieldViolation,
    InvalidParamsError,
    InvalidRequestError,
    MethodNotFoundError,
    public,
    wire_of,
)
from a2a_grpc.core.methods import METHODS, Method, Route

CONTENT_TYPE = "application/a2a+json"
SERVICE_PARAMETERS = {"a2a-version", "a2a-extensions"}

def error_body(exc: BaseException, http_status: int | None = None) -> dict[str, Any]:
    """google.rpc.Status as JSON; its `code` is the answer's HTTP status."""
    err = public(exc)
    code, status = codec.error_details(err)
    return {"error": {"code": http_status or wire_of(err).http,
                      "status": code_pb2.Code.Name(code),
                      "message": err.message, "details": status.get("details", [])}}


def error_response(exc: BaseException, http_status: int | None = None,
                   headers: dict[str, str] | None = None) -> Answer:
    status = http_status or wire_of(public(exc)).http
    return codec.json_response(error_body(exc, status), "application/json", status,
                               {**refusal_headers(exc), **(headers or {})})


class RestEndpoints:
    def __init__(
        self, service: A2AService, *, max_body: int, max_depth: int, keepalive: float
    ) -> None:
        self.service = service
        self.max_body = max_body
        self.max_depth = max_depth
        self.keepalive = keepalive

    def routes(self, prefix: str = "") -> list[tuple[str, str, Handler]]:
        out = []
        for method in METHODS.values():
            for route in method.routes:
                verbs = {route.verb}
                if method.name == "SubscribeToTask":
                    verbs |= {"GET", "POST"}
                for verb in sorted(verbs):
                    out.append((verb, route.aiohttp_path(prefix), self._handler(method, route)))
        return out

    def _handler(self, method: Method, route: Route) -> Handler:
        async def handle(request: Incoming) -> Response:
            return await self._handle(request, method, route)

        return handle

    async def _handle(self, request: Incoming, method: Method, route: Route) -> Response:
        try:
            req = await self._request(request, method, route)
        except BodyTooLarge:
            return error_response(InvalidRequestError(
                f"request body over {self.max_body} bytes; send less (e.g. files as URLs)"),
                http_status=413)
        except Exception as exc:
            note(exc, f"REST {method.name}")
            return error_response(exc)
        call = getattr(self.service, method.attr)
        try:
            if method.streaming:
                events = await call(req, call_context(request))
                return sse.stream(
                    events, render=codec.printed_event,
                    render_error=lambda exc: (self._noted(exc, method), "error"),
                    keepalive=self.keepalive)
            result = await call(req, call_context(request))
        except Exception as exc:
            note(exc, f"REST {method.name}")
            return error_response(exc)
        return codec.json_response(codec.rendered(result), CONTENT_TYPE)

    @staticmethod
    def _noted(exc: BaseException, method: Method) -> dict[str, Any]:
        note(exc, f"REST {method.name} stream")
        return error_body(exc)

    async def _request(self, request: Incoming, method: Method, route: Route) -> Message:
        if route.body == "*" or request.method == "POST":
            raw = await request.read()
            data = codec.loads(raw, self.max_depth) if raw.strip() else {}
            where = "body"
        else:
            data = query_fields(request, method.request)
            where = "query parameters"
        req = codec.parse(data, method.request, where=where)
        for name in route.path_fields:
            setattr(req, name, request.match[name])
        return req


def query_fields(request: Incoming, cls: type[Message]) -> dict[str, Any]:
    """The fields of a `cls` request given as query parameters, as ProtoJSON."""
    fields = cls.DESCRIPTOR.fields
    by_name: dict[str, Any] = {f.json_name: f for f in fields} | {f.name: f for f in fields}
    out: dict[str, Any] = {}
    for key in set(request.query.keys()):
        field = by_name.get(key)
        if field is None or key.lower() in SERVICE_PARAMETERS:
            continue  # unknown parameters are ignored (§5.7)
        values = [_query_value(field, v) for v in request.query.getall(key)]
        out[field.json_name] = values if field.is_repeated else values[-1]
    return out


def _query_value(field: FieldDescriptor, raw: str) -> Any:
    if field.type != FieldDescriptor.TYPE_BOOL:
        return raw  # json_format reads numbers, enum names and timestamps from strings
    if raw.lower() in ("true", "1"):
        return True
    if raw.lower() in ("false", "0"):
        return False
    raise InvalidParamsError(
        f"{field.json_name} must be true or false, got {raw!r}",
        violations=[FieldViolation(field.json_name, "must be true or false")])


def unmatched(method: str, path: str, allowed: set[str]) -> Answer:
    """What no route takes: a path no route has (404) or a verb its routes lack
    (405, naming the verbs they take), as every error, a google.rpc.Status body."""
    if not allowed:
        return error_response(MethodNotFoundError(
            f"no A2A operation at {method} {path}"), http_status=404)
    return error_response(MethodNotFoundError(
        f"{method} is not allowed on {path}; use " + ", ".join(sorted(allowed))),
        http_status=405, headers={"Allow": ", ".join(sorted(allowed))})
