"""Which A2A-Version values a call written in an earlier dialect accepts.

A call is served in the dialect it is written in (its method name, path or
gRPC service); an `A2A-Version` that says otherwise is VersionNotSupported.
Without the header the call is served as written.
"""

from __future__ import annotations

import dataclasses

from a2a_grpc.core.call import CallContext
from a2a_grpc.core.errors import VersionNotSupportedError

ACCEPTS = {"0.3": ("0.3",), "0.1": ("0.1", "0.2")}  # A2A-Version values per dialect


def major_minor(version: str | None) -> str:
    return ".".join((version or "").strip().split(".")[:2])


def as_dialect(ctx: CallContext, dialect: str, *, client_task_ids: bool = False
                  ) -> CallContext:
    """The call as the 1.0 handler serves it, once its version is checked."""
    wanted = major_minor(ctx.version)
    accepted = ACCEPTS[dialect]
    if wanted and wanted not in accepted:
        raise VersionNotSupportedError(
            f"an A2A {accepted[-1]} call was made with A2A-Version {ctx.version!r}; "
            f"make it without the header or with {accepted[-1]}, or use the 1.0 methods",
            metadata={"supportedVersions": ",".join((*accepted, "1.0"))})
    return dataclasses.replace(ctx, version="1.0", client_task_ids=client_task_ids,
                               dialect=dialect)
