"""Optional parts and the extra that installs each: a feature whose package
is missing fails with one line saying what to install, never a traceback.

    pip install 'a2a-grpc[postgres]'   # --store postgresql://
    pip install 'a2a-grpc[redis]'      # --bus redis://
    pip install 'a2a-grpc[otel]'       # exporting traces (OTEL_TRACES_EXPORTER, OTLP)
    pip install 'a2a-grpc[auth]'       # JWT/OIDC callers, signed push notifications and cards
    pip install 'a2a-grpc[langgraph]'  # serving a LangGraph graph (a2a_grpc.adapters)
    pip install 'a2a-grpc[pydantic-ai]'  # serving a Pydantic AI agent
    pip install 'a2a-grpc[adk]'        # serving a Google ADK agent
    pip install 'a2a-grpc[sdk]'        # serving an a2a-sdk AgentExecutor (it has it already)
    pip install 'a2a-grpc[all]'
"""

from __future__ import annotations

# extra -> the top-level modules it brings
EXTRAS = {"postgres": ("asyncpg",), "redis": ("redis",), "otel": ("opentelemetry",),
          "auth": ("jwt", "cryptography"), "langgraph": ("langgraph", "langchain_core"),
          "pydantic-ai": ("pydantic_ai", "pydantic"), "adk": ("google",),
          "pyvoy": ("pyvoy", "envoy"), "sdk": ("a2a",)}


class MissingExtraError(RuntimeError):
    """A feature was asked for whose optional dependency is not installed."""

    def __init__(self, feature: str, extra: str) -> None:
        super().__init__(f"{feature} needs the optional dependencies of a2a-grpc[{extra}]: "
                         f"pip install 'a2a-grpc[{extra}]'")
        self.extra = extra


def missing(error: ImportError, feature: str, extra: str) -> ImportError | MissingExtraError:
    """The error to raise for `error`: MissingExtraError when what is missing is
    a module of `extra`, else `error` itself (a broken install, a bug)."""
    name = (error.name or "").split(".")[0]
    return MissingExtraError(feature, extra) if name in EXTRAS[extra] else error
