"""Service parameters (spec §3.2.6, §3.6): the A2A version a call asks for, the
extensions it declares, and this server's own stream-resume parameters."""

from __future__ import annotations

from a2a_grpc.core.call import CallContext
from a2a_grpc.core.errors import (
    ExtensionSupportRequiredError,
    FieldViolation,
    InvalidParamsError,
    VersionNotSupportedError,
)
from a2a_grpc.core.stream import LAST_EVENT_ID, RESUMABLE_STREAMS_URI
from a2a_grpc.generated.a2a_pb2 import AgentCard

SUPPORTED_VERSIONS = ("1.0",)
PREVIEW_VERSIONS = ("1.0", "1.1")  # with the A2A 1.1 preview on (generations.py)
MAX_SEQ = 2**63 - 1  # sequence numbers are BIGINT in the SQL stores


class ServiceParameters:
    def __init__(self, card: AgentCard, versions: tuple[str, ...] = SUPPORTED_VERSIONS) -> None:
        # Read once: walking the card's protos on every call costs more than the call.
        self._required = tuple(x.uri for x in card.capabilities.extensions if x.required)
        self.versions = versions

    def check(self, ctx: CallContext) -> None:
        """VersionNotSupported, or ExtensionSupportRequired for a required
        extension the call did not declare."""
        version, versions = ctx.version, self.versions
        # A call without A2A-Version is served as 1.0 here; the edges send the calls
        # of earlier dialects through legacy/ first.
        if version and version not in versions:
            major_minor = ".".join(version.split(".")[:2])
            if major_minor not in versions:
                raise VersionNotSupportedError(
                    f"A2A version {version!r} is not supported; this agent serves "
                    + ", ".join(versions),
                    metadata={"supportedVersions": ",".join(versions)},
                )
        for uri in self._required:
            if uri not in ctx.extensions:
                raise ExtensionSupportRequiredError(
                    f"this agent requires extension {uri}; declare it in A2A-Extensions",
                    metadata={"extension": uri},
                )


def announces(ctx: CallContext) -> bool:
    """Does the caller want sequence numbers where they cost a message of their
    own? If so, the resumable-streams extension is activated for the call."""
    if RESUMABLE_STREAMS_URI in ctx.extensions:
        ctx.activated.add(RESUMABLE_STREAMS_URI)
        return True
    return False


def last_event_id(ctx: CallContext) -> int | None:
    """`Last-Event-ID` (HTTP) or `a2a-last-event-id` (gRPC metadata), if sent."""
    raw = ctx.metadata.get(LAST_EVENT_ID) or ctx.metadata.get("last-event-id")
    if raw is None or not raw.strip():
        return None
    try:
        value = int(raw.strip())
        if not 0 <= value <= MAX_SEQ:  # past 2**63-1 a SQL driver overflows (a 500)
            raise ValueError(raw)
    except ValueError:
        raise InvalidParamsError(
            f"last event id must be a non-negative integer, got {raw!r}",
            violations=[FieldViolation("Last-Event-ID", "a sequence number from an SSE id:")],
        ) from None
    return value
