"""What a request that does not fit the proto is told, in the wire's words:
json_format's message without Python's (an int() call, a bytes-like
object) or our module's package name (the wire's is lf.a2a.v1)."""

from __future__ import annotations

import re
from collections.abc import Callable

_JSON_TYPES = {"int": "a number", "float": "a number", "bool": "true or false",
               "list": "an array", "dict": "an object", "NoneType": "null"}
_PLAINLY: list[tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]]] = [
    (re.compile(r"\ba2a_grpc\.(lf\.a2a\.v1\.)"), r"\1"),  # the wire's package name
    (re.compile(r"invalid literal for int\(\) with base 10: "), "not an integer: "),
    (re.compile(r"could not convert string to float: "), "not a number: "),
    (re.compile(r"expected string or bytes-like object, got '(\w+)'"),
     lambda m: f"expected a string, got {_JSON_TYPES.get(m[1], m[1])}"),
    (re.compile(r"\.\.+$"), "."),
]


def plainly(said: str) -> str:
    """json_format's words for a value that does not fit, without Python's
    (an int() call, a bytes-like object) or our module's package name."""
    for pattern, plain in _PLAINLY:
        said = pattern.sub(plain, said)
    return said
