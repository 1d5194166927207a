"""Which handler answers a request: the HTTP face's one route table, matched
the same way under aiohttp and under ASGI.

Templates are written as aiohttp writes them (`/tasks/{id:[^/:]+}:cancel`,
`{name}` for one path segment). A path with no variable is looked up at
once; the others are tried in the order they were added, those whose first
segment is a word (`/v1/...`, a hosted agent's `/travel/...`) before those
whose first segment is a variable (1.0's `/{tenant}/...`, which would take
them), and only those whose first word is the path's.
A path no route has is 404, a verb its routes lack 405 naming the verbs
they take, both with a google.rpc.Status body like every error
(rest.unmatched). A GET route answers HEAD too.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable

from a2a_grpc.bridge.calls import activated_header
from a2a_grpc.bridge.face import Handler, Incoming, Refused, Response, text
from a2a_grpc.bridge.rest import unmatched

_VARIABLE = re.compile(r"\{(\w+)(?::([^{}]+))?\}")


def compiled(template: str) -> re.Pattern[str]:
    out, at = [], 0
    for found in _VARIABLE.finditer(template):
        out.append(re.escape(template[at:found.start()]))
        out.append(f"(?P<{found[1]}>{found[2] or '[^/]+'})")
        at = found.end()
    out.append(re.escape(template[at:]))
    return re.compile("".join(out) + r"\Z")


def _first(path: str) -> str:
    """`/v1/tasks/x` -> `v1`."""
    return path[1:].split("/", 1)[0]


class Router:
    def __init__(self) -> None:
        self._static: dict[str, dict[str, Handler]] = {}  # path -> verb -> handler
        # first path segment (None: a variable) -> [(pattern, verb -> handler)]
        self._dynamic: dict[str | None, list[tuple[re.Pattern[str], dict[str, Handler]]]] = {}
        self._closers: list[Callable[[], Awaitable[None]]] = []

    def add(self, verb: str, template: str, handler: Handler) -> None:
        verbs = (verb, "HEAD") if verb == "GET" else (verb,)
        if _VARIABLE.search(template) is None:
            table = self._static.setdefault(template, {})
        else:
            pattern = compiled(template)
            first = _first(template)
            bucket = self._dynamic.setdefault(None if "{" in first else first, [])
            same = [t for known, t in bucket if known.pattern == pattern.pattern]
            table = same[0] if same else {}
            if not same:
                bucket.append((pattern, table))
        for v in verbs:
            table.setdefault(v, handler)

    def static_routes(self) -> dict[str, dict[str, Handler]]:
        """The paths with no variable and their verbs' handlers (a face may look
        them up by its own means: see `answer` for what it then does)."""
        return {path: dict(verbs) for path, verbs in self._static.items()}

    def on_close(self, closer: Callable[[], Awaitable[None]]) -> None:
        """Run `closer` when the face stops (the inspector's clients)."""
        self._closers.append(closer)

    async def close(self) -> None:
        for closer in self._closers:
            await closer()

    def resolve(self, method: str, path: str) -> tuple[Handler | None, dict[str, str], set[str]]:
        """The handler, what its template took from the path, and (when no
        handler) the verbs the path does take."""
        allowed: set[str] = set()
        table = self._static.get(path)
        if table is not None:
            handler = table.get(method)
            if handler is not None:
                return handler, {}, allowed
            allowed |= table.keys()
        for bucket in (self._dynamic.get(_first(path)), self._dynamic.get(None)):
            for pattern, table in bucket or ():
                found = pattern.match(path)
                if found is None:
                    continue
                handler = table.get(method)
                if handler is not None:
                    return handler, found.groupdict(), allowed
                allowed |= table.keys()
        return None, {}, allowed

    async def answer(self, incoming: Incoming,
                     elsewhere: Callable[[Incoming], Awaitable[set[str]]] | None = None,
                     ) -> Response:
        """What the face sends back for `incoming`. `elsewhere`: the verbs the
        path takes among routes the host app has beside these."""
        handler, match, allowed = self.resolve(incoming.method, incoming.path)
        if handler is None:
            if elsewhere is not None:
                allowed |= await elsewhere(incoming)
            return unmatched(incoming.method, incoming.path, allowed)
        incoming.match = match
        try:
            response = await handler(incoming)
        except Refused as exc:
            return text(exc.status, exc.text)
        return finished(response, incoming)


def finished(response: Response, incoming: Incoming) -> Response:
    """`response` with what every answer carries: the extensions activated."""
    named = activated_header(incoming)
    if named:
        response.headers["A2A-Extensions"] = named
        if "X-A2A-Extensions" in incoming.headers:  # a 0.3 client: 0.3's name too
            response.headers["X-A2A-Extensions"] = named
    return response
