"""TLS for both ports, with certificates that can be replaced while serving.

`--tls-cert` and `--tls-key` (PEM) turn TLS on for gRPC and HTTP alike;
`--tls-client-ca` makes the server ask for client certificates signed by that
CA (mutual TLS), `--tls-require-client-cert` refuses handshakes without one.

Replacing the files takes effect without a restart and without dropping a
call: connections already open keep the session they have; new handshakes
use the new certificate. gRPC asks for its certificate configuration on
each handshake (grpc.dynamic_ssl_server_credentials) and gets a new one when
the files changed; the HTTP port's SSLContext is loaded again in place on
SIGHUP or when the files' modification times change (checked every
`CHECK_S` seconds).
"""

from __future__ import annotations

import asyncio
import logging
import os
import ssl
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import grpc

from a2a_grpc.app.hangup import on_hangup

log = logging.getLogger("a2a_grpc.tls")
CHECK_S = 2.0


@dataclass(frozen=True, slots=True)
class TlsFiles:
    cert: Path
    key: Path
    client_ca: Path | None = None
    require_client_cert: bool = False

    def stamp(self) -> tuple[float, ...]:
        """When the files last changed (a change of any means: load again)."""
        paths = [self.cert, self.key, *([self.client_ca] if self.client_ca else [])]
        try:
            return tuple(os.stat(p).st_mtime_ns for p in paths)
        except OSError:
            return ()  # being replaced right now: keep what is loaded

    def check(self) -> None:
        """Fail early, with the flag's name, when the files can't be used."""
        try:
            self.ssl_context()
        except (OSError, ssl.SSLError) as exc:
            raise ValueError(f"--tls-cert/--tls-key/--tls-client-ca: {exc}") from None

    def ssl_context(self) -> ssl.SSLContext:
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.load(ctx)
        return ctx

    def load(self, ctx: ssl.SSLContext) -> None:
        ctx.load_cert_chain(self.cert, self.key)
        if self.client_ca is not None:
            ctx.load_verify_locations(self.client_ca)
            ctx.verify_mode = ssl.CERT_REQUIRED if self.require_client_cert else ssl.CERT_OPTIONAL

    def grpc_credentials(self) -> grpc.ServerCredentials:
        seen = [self.stamp()]

        def config() -> grpc.ServerCertificateConfiguration:
            return grpc.ssl_server_certificate_configuration(
                [(self.key.read_bytes(), self.cert.read_bytes())],
                root_certificates=self.client_ca.read_bytes() if self.client_ca else None)

        def fetch() -> grpc.ServerCertificateConfiguration | None:
            stamp = self.stamp()
            if not stamp or stamp == seen[0]:
                return None  # unchanged: keep the configuration in use
            try:
                fresh = config()
            except OSError:
                return None
            seen[0] = stamp
            log.info("TLS certificate reloaded for gRPC from %s", self.cert)
            return fresh

        return grpc.dynamic_ssl_server_credentials(
            config(), fetch, require_client_authentication=self.require_client_cert)


class Reloader:
    """Loads the HTTP port's SSLContext again when its files change or on SIGHUP."""

    def __init__(self, files: TlsFiles, ctx: ssl.SSLContext) -> None:
        self.files, self.ctx = files, ctx
        self._stamp = files.stamp()
        self._task: asyncio.Task[None] | None = None
        self._forget: Callable[[], None] = lambda: None

    def start(self) -> None:
        self._task = asyncio.create_task(self._watch(), name="a2a-tls-reload")
        self._forget = on_hangup(self.reload)  # where signals work; the files are watched too

    async def stop(self) -> None:
        self._forget()
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)

    def reload(self) -> None:
        try:
            self.files.load(self.ctx)
        except (OSError, ssl.SSLError) as exc:
            log.error("TLS certificate not reloaded (keeping the one in use): %s", exc)
            return
        self._stamp = self.files.stamp()
        log.info("TLS certificate reloaded for HTTP from %s", self.files.cert)

    async def _watch(self) -> None:
        await watch(self.files, lambda: self._stamp, self.reload)


async def watch(files: TlsFiles, loaded: Callable[[], tuple[float, ...]],
                reload: Callable[[], None]) -> None:
    """`reload()` whenever the files' stamp is no longer the one `loaded()`
    says is in use, looked at every CHECK_S seconds."""
    while True:
        await asyncio.sleep(CHECK_S)
        stamp = files.stamp()
        if stamp and stamp != loaded():
            reload()
