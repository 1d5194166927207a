"""`a2a-grpc serve`'s settings: one typed value, each setting declared once.

Each field of the group dataclasses below is a setting: its type, default
and help are written there and nowhere else. From them come
- the command line: `--field-name` (or the `flag` it names), in its group's
  section of `a2a-grpc serve --help`;
- the environment: `A2A_GRPC_` and the flag in capitals (`--grpc-port`:
  `A2A_GRPC_GRPC_PORT`; a repeatable one comma-separated);
- a TOML file, `--config FILE`: a table per group, keys the field names
  (`[store] url = "postgresql://..."`, `[push] allow_push_to = ["10.0.0.0/8"]`).
A flag wins over the environment, the environment over the file, the file
over the default. `ServeSettings` is what `serve` takes; settings_load.py
reads it from the three places.
"""

from __future__ import annotations

import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from a2a_grpc.app.settings_values import duration, port
from a2a_grpc.app.threads import POLICIES
from a2a_grpc.auth.apikey import LOCATIONS
from a2a_grpc.bus.local import BACKLOG_BYTES, BACKLOG_EVENTS
from a2a_grpc.cards.card import grpc_address
from a2a_grpc.stores import DEFAULT_URL, shown


def setting(default: Any, help: str, *, metavar: str | None = None,
            choices: Sequence[str] | None = None, convert: Callable[[str], Any] | None = None,
            flag: str | None = None) -> Any:
    """A field that is a setting. `convert`: how text (a flag, a variable)
    becomes the value when the type alone does not say; `flag`: its flag,
    when not `--field-name`."""
    return field(default=default, metadata={
        "help": help, "metavar": metavar, "choices": choices, "convert": convert, "flag": flag})


@dataclass(frozen=True)
class AgentSettings:
    """the agent"""

    agent: str | None = setting(
        None, "your AgentExecutor (instance, class or factory) instead of the demo",
        metavar="MODULE:ATTR")
    card: str | None = setting(
        None, "the agent card to serve: a JSON file (A2A 1.0's shape, or 0.3's as the "
        "a2a-sdk samples write it) or MODULE:ATTR naming an AgentCard (the SDK's or ours); "
        "its name, skills, capabilities and security as given, the interfaces the server's "
        "own (default: the agent's own card)", metavar="FILE|MODULE:ATTR")
    hosted: tuple[str, ...] = setting(
        (), "host several agents on this server, each NAME=MODULE:ATTR (repeatable; "
        "MODULE:ATTR as --agent takes it, or demo): each its card at "
        "/NAME/.well-known/agent-card.json, JSON-RPC and HTTP+JSON under /NAME, gRPC told "
        "apart by the tenant NAME its card gives; all of them listed at "
        "/.well-known/ai-catalog.json", metavar="NAME=MODULE:ATTR", flag="--host-agent")
    follow_ups: str = setting(
        "any", "which tasks take a follow-up message: any non-final one (the default, "
        "spec 3.3.3), or only one asking for input or auth", choices=("any", "interrupted"))
    card_format: str = setting(
        "dual", "the agent card's fields: A2A 1.0's with 0.3's top-level ones beside them, so "
        "0.3 clients find the agent too (dual, the default), or 1.0's alone, for strict 1.0 "
        "validators when no 0.3 client calls", choices=("dual", "1.0"))


@dataclass(frozen=True)
class Network:
    """network: ports, addresses, TLS (both ports; the files may be replaced while serving)"""

    host: str = setting("127.0.0.1", "address to listen on (default 127.0.0.1)")
    grpc_port: int = setting(50051, "gRPC port (default 50051; 0 picks a free one, named in "
                             "the log)", convert=port)
    grpc_public_address: str | None = setting(
        None, "the gRPC address the card advertises, when clients reach it through a proxy or "
        "load balancer (default HOST:GRPC_PORT)", metavar="HOST:PORT", convert=grpc_address)
    http_port: int = setting(8080, "JSON-RPC, REST and agent card port (default 8080)",
                             convert=port)
    jsonrpc_path: str = setting("/", "the JSON-RPC endpoint's path on the HTTP port, named "
                                "in the card (default /)", metavar="PATH")
    public_url: str | None = setting(
        None, "base URL clients use for HTTP, when behind a proxy (default "
        "http://HOST:HTTP_PORT)", metavar="URL")
    keepalive: float = setting(
        2.0, "seconds between SSE keep-alive comments on quiet streams (default 2: under the "
        "5 s read timeout of the official Python clients and the idle timeouts of proxies)",
        metavar="SECONDS")
    max_body: int = setting(8 * 1024 * 1024, "largest HTTP request body in bytes (default "
                            "8 MiB)")
    grace: float = setting(
        5.0, "on SIGTERM, after the notice: seconds calls in progress and running agents get "
        "to finish before the process exits; runs still going are left for another replica "
        "(--bus) or for the next start (default 5)")
    drain_notice: float | None = setting(
        None, "on SIGTERM, seconds /readyz answers 503 while calls are still taken, for load "
        "balancers to stop routing here; then new calls are refused (503) and open streams "
        "end for their clients to resume elsewhere (default 3 with --bus, else 0)",
        metavar="SECONDS")
    workers: int = setting(
        1, "processes serving on the same ports, a core each (SO_REUSEPORT), supervised and "
        "started again if one stops; they share the store (SQLite or PostgreSQL) and, "
        "without --bus, this process relays their events (default 1)", metavar="N")
    grpc_carrier: str = setting(
        "grpc.aio", "what serves gRPC: grpc.aio on --grpc-port (the default), or pyvoy "
        "(Envoy's HTTP/2, the a2a-grpc[pyvoy] extra): gRPC, JSON-RPC and HTTP+JSON each on "
        "both --grpc-port and --http-port", choices=("grpc.aio", "pyvoy"))
    loop: str = setting("auto", "event loop: uvloop when installed (auto, the default), or "
                        "asyncio's", choices=("auto", "uvloop", "asyncio"))
    helper_threads: str = setting(
        "normal", "the scheduling of threads beside the event loop's (gRPC's, the SQLite "
        "writer's): batch (SCHED_BATCH: they no longer preempt the loop on waking, with "
        "their full share of the core), low (nice 19) or idle (SCHED_IDLE: they also give "
        "way to every other busy process), or normal", choices=POLICIES)
    tls_cert: Path | None = setting(None, "certificate chain (PEM)", metavar="PEM")
    tls_key: Path | None = setting(None, "its private key (PEM)", metavar="PEM")
    tls_client_ca: Path | None = setting(
        None, "ask for client certificates signed by this CA (mutual TLS)", metavar="PEM")
    tls_require_client_cert: bool = setting(
        False, "with --tls-client-ca: refuse connections without a client certificate")


@dataclass(frozen=True)
class Store:
    """store: tasks, events, replicas"""

    url: str = setting(DEFAULT_URL, "memory, sqlite:///PATH or postgresql://USER@HOST/DB "
                       f"(default {DEFAULT_URL}, a file in the working directory)",
                       metavar="URL", flag="--store")
    bus: str | None = setting(
        None, "share task events between replicas: redis://HOST:PORT/DB (Redis Streams; "
        "?prefix=P names the keys, default a2a). Default: in this process only", metavar="URL")
    lease: float = setting(
        15.0, "with --bus: a replica that has not renewed its running tasks for this long is "
        "taken for stopped; another fails them (or resumes them) (default 15)",
        metavar="SECONDS")
    retention: float | None = setting(
        None, "delete final tasks older than AGE (e.g. 90s, 30m, 12h, 7d); default: keep "
        "everything", metavar="AGE", convert=duration)
    stream_backlog: int = setting(
        BACKLOG_EVENTS, "events a stream's reader may fall behind before the stream is ended "
        f"with a retryable error (default {BACKLOG_EVENTS}; and at most "
        f"{BACKLOG_BYTES >> 20} MiB)", metavar="EVENTS")

    @property
    def shown(self) -> str:
        """The store's URL fit for a log line (no password)."""
        return shown(self.url)


@dataclass(frozen=True)
class Security:
    """security: who may call (any configured scheme admits a caller), and the card's signature"""

    api_keys: Path | None = setting(
        None, "accept API keys: lines SUBJECT:KEY (reloaded on SIGHUP)", metavar="FILE")
    api_key_in: str = setting("header", "where the API key travels (default header)",
                              choices=LOCATIONS)
    api_key_name: str = setting("X-API-Key", "the API key's header, query parameter or cookie "
                                "name (default X-API-Key)", metavar="NAME")
    basic_users: Path | None = setting(
        None, "accept HTTP Basic: lines USER:HASH from `a2a-grpc passwd USER` (reloaded on "
        "SIGHUP)", metavar="FILE")
    jwt_jwks: str | None = setting(None, "accept Bearer JWTs signed by these keys",
                                   metavar="URL")
    jwt_key: tuple[Path, ...] = setting((), "accept Bearer JWTs signed by this public key "
                                        "(repeatable)", metavar="PEM")
    oidc_issuer: str | None = setting(
        None, "accept JWTs of this OpenID Connect issuer (its discovery document names the "
        "JWKS)", metavar="URL")
    oauth2_token_url: str | None = setting(
        None, "publish the JWT scheme as OAuth 2 client credentials at this token endpoint",
        metavar="URL")
    jwt_issuer: str | None = setting(None, "the `iss` tokens must carry", metavar="ISS")
    jwt_audience: str | None = setting(None, "the `aud` tokens must carry", metavar="AUD")
    require_scope: tuple[str, ...] = setting((), "a scope tokens must carry (repeatable)",
                                             metavar="SCOPE")
    authenticator: tuple[str, ...] = setting(
        (), "your own Verifier for a scheme the agent's card declares (repeatable)",
        metavar="SCHEME=MODULE:ATTR")
    card_keys: Path | None = setting(
        None, "sign the agent card (JWS, spec 8.4) with the newest PEM key in DIR, creating "
        "one if there is none; its JWKS is /.well-known/jwks.json", metavar="DIR")


@dataclass(frozen=True)
class Push:
    """push notifications"""

    allow_push_to: tuple[str, ...] = setting(
        (), "let webhooks reach this host name (.example.com: and subdomains), address or "
        "network, even if not public; repeatable", metavar="HOST|CIDR")
    allow_http_push: bool = setting(False, "allow plain http:// webhook URLs (default: "
                                    "https only)")
    push_keys: Path | None = setting(
        None, "sign push notifications (JWT) with the PEM keys in DIR, creating one if there "
        "is none; the JWKS is served at /.well-known/jwks.json", metavar="DIR")
    push_secret_keys: Path | None = setting(
        None, "seal webhooks' credentials at rest with the Fernet keys in FILE, one a line, "
        "newest first (a2a-grpc push-secret-key makes one)", metavar="FILE")
    push_timeout: float = setting(10.0, "seconds per webhook attempt (default 10)")
    push_attempts: int = setting(8, "attempts before a notification is dead-lettered "
                                 "(default 8)")
    push_backoff: float = setting(1.0, "seconds before the first retry; doubles, with jitter "
                                  "(default 1)")


@dataclass(frozen=True)
class Observability:
    """observability: logs, metrics, the inspector"""

    log_level: str = setting("INFO", "DEBUG, INFO, WARNING... (default INFO)")
    log_format: str = setting("text", "text lines (default), or one JSON object a line with "
                              "trace ids", choices=("text", "json"))
    metrics_port: int | None = setting(
        None, "also serve /metrics, /healthz and /readyz alone on this port (for deployments "
        "exposing only gRPC); they are on the HTTP port anyway", metavar="PORT")
    no_inspector: bool = setting(False, "do not serve the inspector page (/inspector) on the "
                                 "HTTP port")
    inspector_remote_targets: bool = setting(
        False, "let the inspector call other agents for browsers on other machines too "
        "(default: only for a browser on this one)")


@dataclass(frozen=True)
class Limits:
    """limits per caller (its subject, or its IP when anonymous) and per process; past one: 429
    + Retry-After, gRPC RESOURCE_EXHAUSTED"""

    rate_limit: float = setting(0.0, "requests per second (default: no limit)",
                                metavar="PER_S")
    rate_burst: int = setting(0, "requests at once before the rate applies (default: 2 s "
                              "worth)", metavar="N")
    max_streams: int = setting(0, "streams open at once (default: no limit)", metavar="N")
    max_tasks: int = setting(0, "agent runs going at once on the caller's tasks (default: "
                             "no limit)", metavar="N")
    max_inflight: int = setting(
        1024, "calls in progress at once in this process, all callers together: past it a new "
        "call is refused at once with a retryable 429 / RESOURCE_EXHAUSTED (default 1024; 0: "
        "no bound)", metavar="N")


@dataclass(frozen=True)
class Preview:
    """preview: the A2A 1.1 draft (a2aproject/A2A dev-1.1), for calls made with A2A-Version 1.1"""

    a2a_1_1_preview: bool = setting(
        False, "serve A2A-Version 1.1 calls as the draft has them: task generations, "
        "long-polling GetTask, ifGenerationMatch; 1.0 calls are answered as before",
        flag="--a2a-1.1-preview")
    long_poll_wait: float = setting(
        30.0, "how long a long-polling GetTask waits when the caller does not say "
        "(Prefer: wait=SECONDS) (default 30)", metavar="SECONDS")
    long_poll_max: float = setting(
        60.0, "the longest a long-polling GetTask waits, whatever the caller prefers "
        "(default 60)", metavar="SECONDS")


@dataclass(frozen=True)
class ServeSettings:
    agent: AgentSettings = field(default_factory=AgentSettings)
    network: Network = field(default_factory=Network)
    store: Store = field(default_factory=Store)
    security: Security = field(default_factory=Security)
    push: Push = field(default_factory=Push)
    observability: Observability = field(default_factory=Observability)
    limits: Limits = field(default_factory=Limits)
    preview: Preview = field(default_factory=Preview)


GROUPS: dict[str, type[Any]] = typing.get_type_hints(ServeSettings)  # name -> its dataclass
