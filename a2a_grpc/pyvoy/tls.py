"""TLS for `serve --grpc-carrier pyvoy`, its certificate replaced while
serving, as on grpc.aio (app/tls.py).

Envoy ends TLS on both ports. It takes its certificate, and the client CA
for mutual TLS, from secret files `serve` writes (Envoy's file-based SDS),
and reads a secret file again as soon as a new one is moved into its
folder. `serve` writes them before Envoy starts, and again on SIGHUP and
when the PEM files' modification times change (checked every CHECK_S
seconds): each file is replaced whole (a rename), connections open keep
their session, new handshakes get the new certificate. Files that do not
load (a key that is not the certificate's, a file half written) are not
written: the certificate in use stays. The folder is the carrier's own
private one (mode 0700), removed when `serve` stops.
"""

from __future__ import annotations

import base64
import json
import logging
import os
import ssl
from pathlib import Path
from typing import Any

from a2a_grpc.app.tls import TlsFiles, watch

log = logging.getLogger("a2a_grpc.tls")
SECRET = "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret"


class EnvoyTls:
    def __init__(self, files: TlsFiles, folder: Path) -> None:
        self.files = files
        self.folder = folder
        folder.mkdir(mode=0o700)
        self._stamp: tuple[float, ...] = ()

    def write(self) -> bool:
        """The secret files as the PEM files now are; False (and a log line)
        when those do not load."""
        files = self.files
        try:
            files.ssl_context()  # the pair matches, the CA parses
            cert, key = files.cert.read_bytes(), files.key.read_bytes()
            ca = files.client_ca.read_bytes() if files.client_ca is not None else None
        except (OSError, ssl.SSLError) as exc:
            log.error("TLS certificate not reloaded (keeping the one in use): %s", exc)
            return False
        self._replace("server", {"tls_certificate": {
            "certificate_chain": _inline(cert), "private_key": _inline(key)}})
        if ca is not None:
            self._replace("client-ca", {"validation_context": {"trusted_ca": _inline(ca)}})
        self._stamp = files.stamp()
        return True

    def reload(self) -> None:
        if self.write():
            log.info("TLS certificate reloaded for gRPC and HTTP from %s", self.files.cert)

    async def watch(self) -> None:
        """Write the secrets again whenever the PEM files change."""
        await watch(self.files, lambda: self._stamp, self.reload)

    def configure(self, config: dict[str, Any]) -> None:
        """pyvoy's Envoy configuration, with the certificate and the client
        CA taken from the secret files instead of read once."""
        config["node"] = {"id": "a2a-grpc", "cluster": "a2a-grpc"}  # what file SDS asks for
        for listener in config["static_resources"]["listeners"]:
            for chain in listener.get("filter_chains", ()):
                transport = chain.get("transport_socket")
                if transport is None:
                    continue
                context = transport["typed_config"]["common_tls_context"]
                context.pop("tls_certificates", None)
                context["tls_certificate_sds_secret_configs"] = [self._source("server")]
                if context.pop("validation_context", None) is not None:
                    context["validation_context_sds_secret_config"] = self._source("client-ca")

    def _source(self, name: str) -> dict[str, Any]:
        return {"name": name, "sds_config": {
            "path_config_source": {"path": str(self.folder / f"{name}.json"),
                                   "watched_directory": {"path": str(self.folder)}},
            "resource_api_version": "V3"}}

    def _replace(self, name: str, secret: dict[str, Any]) -> None:
        staged = self.folder / f".{name}.json"
        fd = os.open(staged, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as out:
            json.dump({"resources": [{"@type": SECRET, "name": name, **secret}]}, out)
        os.replace(staged, self.folder / f"{name}.json")  # whole, at once: what Envoy watches


def _inline(data: bytes) -> dict[str, str]:
    return {"inline_bytes": base64.b64encode(data).decode()}
