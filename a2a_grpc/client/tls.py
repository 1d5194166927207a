"""TLS for our client: a CA bundle to trust (default: the system's) and a
client certificate for mutual TLS, used by both the HTTP session and the
gRPC channel. gRPC, whose card address is a bare host:port, uses TLS when
the card came over https, when the URL is `grpcs://`, or when a CA or a
client certificate was given."""

from __future__ import annotations

import ssl
from pathlib import Path

import grpc


def ssl_context(ca_file: str | None, cert_file: str | None,
                key_file: str | None) -> ssl.SSLContext | None:
    """The HTTP side's context; None: aiohttp's defaults (system CAs)."""
    if not (ca_file or cert_file):
        return None
    ctx = ssl.create_default_context(cafile=ca_file)
    if cert_file:
        ctx.load_cert_chain(cert_file, key_file)
    return ctx


def grpc_credentials(ca_file: str | None, cert_file: str | None,
                     key_file: str | None) -> grpc.ChannelCredentials:
    def read(path: str | None) -> bytes | None:
        return Path(path).read_bytes() if path else None

    return grpc.ssl_channel_credentials(
        root_certificates=read(ca_file), private_key=read(key_file or cert_file),
        certificate_chain=read(cert_file))
