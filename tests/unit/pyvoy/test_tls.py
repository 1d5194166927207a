"""The secret files Envoy takes its certificate from (pyvoy/tls.py):
written whole from the PEM files, not written when those do not load (the
certificate in use stays), and pyvoy's configuration pointed at them. That
Envoy serves a replaced certificate without dropping a call:
tests/integration/test_tls.py, on both carriers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from a2a_grpc.app.tls import TlsFiles
from a2a_grpc.pyvoy.tls import EnvoyTls
from tests.certs import Authority


def secret(folder: Path, name: str) -> dict[str, object]:
    resource: dict[str, object] = json.loads((folder / f"{name}.json").read_text())[
        "resources"][0]
    return resource


def test_written_then_kept_when_the_new_files_do_not_load(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    ca = Authority(tmp_path)
    issued = ca.issue("127.0.0.1", file="server")
    tls = EnvoyTls(TlsFiles(issued.cert, issued.key, ca.path, True), tmp_path / "tls")
    assert tls.write()
    assert (tmp_path / "tls").stat().st_mode & 0o777 == 0o700
    first = secret(tmp_path / "tls", "server")
    assert first["name"] == "server" and "tls_certificate" in first
    assert secret(tmp_path / "tls", "client-ca")["name"] == "client-ca"
    other = ca.issue("127.0.0.1")  # another key: not this certificate's
    issued.key.write_bytes(other.key.read_bytes())
    assert not tls.write()
    assert "TLS certificate not reloaded" in caplog.text
    assert secret(tmp_path / "tls", "server") == first  # the one in use stays


def test_pyvoys_configuration_takes_the_secret_files(tmp_path: Path) -> None:
    ca = Authority(tmp_path)
    issued = ca.issue("127.0.0.1", file="server")
    tls = EnvoyTls(TlsFiles(issued.cert, issued.key, ca.path, True), tmp_path / "tls")
    context: dict[str, Any] = {"tls_certificates": [{}],
                               "validation_context": {"trusted_ca": {}}}
    config: dict[str, Any] = {"static_resources": {"listeners": [{"filter_chains": [
        {"transport_socket": {"typed_config": {"common_tls_context": context}}}]}]}}
    tls.configure(config)
    assert "tls_certificates" not in context and "validation_context" not in context
    [server] = context["tls_certificate_sds_secret_configs"]
    assert server["sds_config"]["path_config_source"]["path"] == str(
        tmp_path / "tls" / "server.json")
    assert context["validation_context_sds_secret_config"]["name"] == "client-ca"
    assert config["node"]  # file SDS needs one
