"""Functions compiled per message type, as dataclasses builds `__init__`:
source text built from a descriptor alone, then `exec`. The request checker
(core.validate) and the ProtoJSON printers (bridge.protojson) are made so."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from google.protobuf.descriptor import Descriptor

Compiled = Callable[[Any], Any]


def per_type(table: dict[str, Compiled], desc: Descriptor,
             compile_for: Callable[[Descriptor], Compiled]) -> Compiled:
    """`table`'s function for `desc`, compiled on first use. While it compiles,
    a type that contains itself reaches its own function through the table."""
    name = desc.full_name
    found = table.get(name)
    if found is None:
        table[name] = lambda msg: table[name](msg)
        found = table[name] = compile_for(desc)
    return found


def define(lines: list[str], namespace: dict[str, Any], name: str) -> Compiled:
    """The function `name` that the source `lines` define, run in `namespace`."""
    exec("\n".join(lines), namespace)  # source built from a descriptor, not from input
    function: Compiled = namespace[name]
    return function
