"""This package's version (from its installed metadata), and the A2A protocol
versions it serves."""

from __future__ import annotations

from importlib import metadata

try:
    VERSION = metadata.version("a2a-grpc")
except metadata.PackageNotFoundError:  # run from a checkout that was never installed
    VERSION = "0+unknown"

# The A2A versions served: 1.0 (A2A-Version 1.0, all three bindings), and the
# generations still in use beside it (legacy/): 0.3 and the first draft.
PROTOCOLS = (("1.0", "A2A 1.0 (gRPC, JSON-RPC, HTTP+JSON)"),
             ("1.1", "the A2A 1.1 draft's task generations (opt-in: serve --a2a-1.1-preview)"),
             ("0.3", "A2A 0.3 (JSON-RPC, HTTP+JSON under /v1, gRPC a2a.v1)"),
             ("0.1", "the first draft (tasks/send, tasks/sendSubscribe)"))


def describe() -> str:
    """What `a2a-grpc --version` prints."""
    served = "; ".join(text for _, text in PROTOCOLS)
    return f"a2a-grpc {VERSION}, serving {served}"
