"""`a2a-grpc proto --out DIR`: the contract, for stubs in any language.

Writes the service's `.proto` files (a2a.proto: lf.a2a.v1, A2A 1.0; and
a2a_v03.proto: 0.3's a2a.v1) with the google/api and google/rpc files they
import or that clients need to read error details (google.rpc.Status,
ErrorInfo), so that `protoc -I DIR` compiles them as they are. The
google/protobuf well-known types come with every protoc.
"""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path

import google.api

OURS = ("a2a.proto", "a2a_v03.proto")
# Not imported by ours, but what a client reads errors with (spec §10.6, §11.6).
ALSO = ("google/rpc/status.proto", "google/rpc/error_details.proto", "google/rpc/code.proto")
IMPORT = re.compile(r'^import\s+(?:public\s+|weak\s+)?"([^"]+)";', re.M)


def _googleapis() -> Path:
    """Where googleapis-common-protos keeps its .proto files (beside its modules)."""
    return Path(next(iter(google.api.__path__))).parent.parent


def write(out: Path) -> list[Path]:
    """Write the files into `out` (made if missing); the paths written."""
    ours = resources.files("a2a_grpc") / "proto"
    common = _googleapis()
    written: list[Path] = []
    pending: list[tuple[str, str]] = []  # (path under out, text)
    for name in OURS:
        pending.append((name, (ours / name).read_text()))
    pending += [(name, (common / name).read_text()) for name in ALSO]
    seen = {name for name, _ in pending}
    while pending:
        name, text = pending.pop()
        target = out / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        written.append(target)
        for imported in IMPORT.findall(text):
            if imported in seen or imported.startswith("google/protobuf/"):
                continue
            source = common / imported
            if not source.is_file():
                raise FileNotFoundError(f"{name} imports {imported}, which "
                                        "googleapis-common-protos does not have")
            seen.add(imported)
            pending.append((imported, source.read_text()))
    return sorted(written)
