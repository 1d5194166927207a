"""`make proto`'s first step: copies of proto/*.proto with private packages
(a2a_grpc.core.published), which our Python types are compiled from.

Usage: python -m tools.private_protos OUT_DIR PROTO...
"""

from __future__ import annotations

import sys
from pathlib import Path

from a2a_grpc.core.published import private_source


def main(out: str, *protos: str) -> None:
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    for proto in map(Path, protos):
        (folder / proto.name).write_text(private_source(proto.read_text()))


if __name__ == "__main__":
    main(*sys.argv[1:])
