"""Which dialect serves a JSON-RPC call, by what arrives (one handler for all).

- 1.0, 0.3 and first-draft method names mostly differ, so a call is served in
  the dialect its method is written in: `SendMessage` as 1.0,
  `message/send` as 0.3, `tasks/send` as the first draft (0.1, 0.2).
- An `A2A-Version` that contradicts the method is VersionNotSupported.
- `tasks/get`, `tasks/cancel` and `tasks/resubscribe` are both 0.3 and
  first-draft names. With `A2A-Version: 0.3`, or `0.1`/`0.2`, they answer in
  that dialect. Without one (ambiguous; spec 1.0 §3.6.2 reads it as 0.3)
  the answer is the 0.3 shape with the draft's fields beside it (`sessionId`,
  a part's `type`, an artifact's `index`): what either reader looks for.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from a2a_grpc.bridge.legacy import methods01 as v01_methods
from a2a_grpc.bridge.legacy import methods03 as v03_methods
from a2a_grpc.bridge.legacy.methods03 import LegacyMethod
from a2a_grpc.core.call import CallContext
from a2a_grpc.legacy.json03 import Json
from a2a_grpc.legacy.versions import ACCEPTS, as_dialect, major_minor


def resolve(name: str, version: Callable[[], str | None]) -> LegacyMethod | None:
    """The legacy method a call names, or None (then it is a 1.0 method, or none).
    `version` gives the call's A2A-Version; asked only for the ambiguous names."""
    new, old = v03_methods.METHODS.get(name), v01_methods.METHODS.get(name)
    if new is None or old is None:
        return new or old
    wanted = major_minor(version())
    if wanted in ACCEPTS["0.1"]:
        return old
    if wanted:
        return new
    return dataclasses.replace(new, result=_both(new.result, old.result),
                               per_stream=_both_streams(new, old))


def context_for(ctx: CallContext, method: LegacyMethod) -> CallContext:
    """The call as the 1.0 handler serves it, once its version is checked."""
    return as_dialect(ctx, method.version, client_task_ids=method.client_task_ids)


def _both(a: Any, b: Any) -> Any:
    def render(r: Json) -> Any:
        return merged(a(r), b(r))
    return render


def _both_streams(new: LegacyMethod, old: LegacyMethod) -> Any:
    def per_stream() -> Any:
        return _both(new.renderer(), old.renderer())
    return per_stream


def merged(a: Any, b: Any) -> Any:
    """`a` with what `b` has beside it: objects key by key, lists item by item;
    where both have a value, `a`'s wins."""
    if isinstance(a, dict) and isinstance(b, dict):
        return {**b, **{k: merged(v, b[k]) if k in b else v for k, v in a.items()}}
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [merged(x, y) for x, y in zip(a, b, strict=True)]
    return a
