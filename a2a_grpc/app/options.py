"""What the settings (settings.py) mean to each part the app wires: the
options objects the HTTP side, TLS, authentication, push, limits and the
observability endpoints take, checked as they are made (ValueError names the
flag)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from a2a_grpc.app.admission import AdmissionOptions
from a2a_grpc.app.http import HttpOptions
from a2a_grpc.app.limits import LimitOptions
from a2a_grpc.app.settings import Limits, Network, Observability, Preview, Push, Security
from a2a_grpc.app.tls import TlsFiles
from a2a_grpc.auth.config import AuthOptions
from a2a_grpc.bridge import BridgeConfig
from a2a_grpc.handler.generations import PreviewOptions
from a2a_grpc.push.policy import PushPolicy
from a2a_grpc.push.secrets import SecretBox
from a2a_grpc.push.sender import SenderConfig


@dataclass(frozen=True, slots=True)
class ObserveOptions:
    metrics_port: int | None = None  # also serve /metrics and health alone on this port
    inspector: bool = True  # the inspector page at /inspector on the HTTP port
    inspector_remote_targets: bool = False  # it may call other agents for any browser


@dataclass(frozen=True, slots=True)
class PushOptions:
    policy: PushPolicy = field(default_factory=PushPolicy)
    keys_dir: Path | None = None  # sign notifications with the keys found (or made) here
    sender: SenderConfig = field(default_factory=SenderConfig)
    secrets: SecretBox | None = None  # seals webhook credentials at rest


def tls_files(net: Network) -> TlsFiles | None:
    if net.tls_cert is None and net.tls_key is None:
        if net.tls_client_ca or net.tls_require_client_cert:
            raise ValueError("--tls-client-ca needs --tls-cert and --tls-key")
        return None
    if net.tls_cert is None or net.tls_key is None:
        raise ValueError("TLS needs both --tls-cert and --tls-key")
    files = TlsFiles(net.tls_cert, net.tls_key, net.tls_client_ca, net.tls_require_client_cert)
    files.check()
    return files


def http_options(net: Network, card_format: str = "dual") -> HttpOptions:
    if not net.jsonrpc_path.startswith("/"):
        raise ValueError(f"--jsonrpc-path {net.jsonrpc_path!r} must start with /")
    return HttpOptions(net.host, net.http_port, net.public_url,
                       BridgeConfig(jsonrpc_path=net.jsonrpc_path, keepalive=net.keepalive,
                                    max_body_bytes=net.max_body,
                                    card_v03_fields=card_format == "dual"),
                       tls_files(net))


def auth_options(sec: Security, net: Network) -> AuthOptions:
    plugins = {}
    for item in sec.authenticator:
        scheme, sep, target = item.partition("=")
        if not sep or ":" not in target:
            raise ValueError(f"--authenticator {item!r}: write SCHEME=MODULE:ATTR")
        plugins[scheme] = target
    return AuthOptions(
        api_keys=sec.api_keys, api_key_in=sec.api_key_in, api_key_name=sec.api_key_name,
        basic_users=sec.basic_users, jwt_jwks=sec.jwt_jwks, jwt_keys=sec.jwt_key,
        oidc_issuer=sec.oidc_issuer, oauth2_token_url=sec.oauth2_token_url,
        jwt_issuer=sec.jwt_issuer, jwt_audience=sec.jwt_audience,
        scopes=sec.require_scope, authenticators=plugins, mtls=net.tls_client_ca is not None)


def push_options(push: Push) -> PushOptions:
    return PushOptions(
        PushPolicy.from_flags(push.allow_push_to, push.allow_http_push), push.push_keys,
        SenderConfig(timeout=push.push_timeout, max_attempts=push.push_attempts,
                     base_delay=push.push_backoff),
        None if push.push_secret_keys is None else SecretBox.from_file(push.push_secret_keys))


def admission_options(limits: Limits) -> AdmissionOptions:
    if limits.max_inflight < 0:
        raise ValueError("--max-inflight must be >= 0")
    return AdmissionOptions(limits.max_inflight)


def drain_notice(net: Network, replicated: bool) -> float:
    """How long /readyz says 503 before calls are refused (`--drain-notice`)."""
    notice = net.drain_notice if net.drain_notice is not None else 3.0 if replicated else 0.0
    if notice < 0 or net.grace < 0:
        raise ValueError("--drain-notice and --grace must be >= 0")
    return notice


def drain_words(replicated: bool) -> tuple[str, str]:
    """What a draining server tells the calls it refuses, and the streams it
    ends: another replica answers them only where there are others."""
    if replicated:
        return ("this server is shutting down: retry, another replica will answer",
                "this server is shutting down: resume the stream (another replica will answer)")
    return ("this server is shutting down: retry once it is back",
            "this server is shutting down: resume the stream once it is back")


def limit_options(limits: Limits) -> LimitOptions:
    for name in ("rate_limit", "rate_burst", "max_streams", "max_tasks"):
        if getattr(limits, name) < 0:
            raise ValueError(f"--{name.replace('_', '-')} must be >= 0")
    return LimitOptions(limits.rate_limit, limits.rate_burst, limits.max_streams,
                        limits.max_tasks)


def observe_options(obs: Observability) -> ObserveOptions:
    return ObserveOptions(obs.metrics_port, not obs.no_inspector, obs.inspector_remote_targets)


def preview_options(preview: Preview) -> PreviewOptions | None:
    """The A2A 1.1 preview's options, or None when it is off."""
    if not preview.a2a_1_1_preview:
        return None
    try:
        return PreviewOptions(preview.long_poll_wait, preview.long_poll_max)
    except ValueError:
        raise ValueError("--long-poll-wait must be > 0 and at most --long-poll-max") from None
