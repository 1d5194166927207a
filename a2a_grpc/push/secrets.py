"""Webhook credentials sealed at rest (`serve --push-secret-keys FILE`).

A config's `authentication.credentials` is stored sealed with Fernet
(cryptography: AES-128-CBC with HMAC-SHA256, the token timestamped), and
opened only by the push sender to build the delivery's Authorization header:
a copy of the store (a backup, a replica's disk) does not give away the
secrets clients gave their webhooks. Get and List never answer them anyway
(handler/push_configs.py).

FILE holds Fernet keys, one per line (`#` comments allowed), newest first:
the first seals, every one opens (MultiFernet). Rotation: put a new key on
the first line and keep the old ones; configs made from then on are sealed
with the new key. A key may go once no config sealed with it is left: a
config lives as long as its task, so after `--retention`. Credentials stored
before sealing was on stay readable as they are.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from a2a_grpc.core.extras import missing

SEALED = "sealed:fernet:"  # what a sealed value starts with


class SecretsError(Exception):
    """Sealed credentials that cannot be opened: no key, or not the key."""


def _fernet() -> Any:
    """cryptography's fernet module: the [auth] extra brings it."""
    try:
        from cryptography import fernet
    except ImportError as exc:
        raise missing(exc, "sealing push secrets (--push-secret-keys)", "auth") from None
    return fernet


class SecretBox:
    def __init__(self, keys: Sequence[bytes]) -> None:
        fernet = _fernet()
        if not keys:
            raise ValueError("--push-secret-keys: the file holds no key")
        try:
            self._fernet = fernet.MultiFernet([fernet.Fernet(key) for key in keys])
            self._invalid = fernet.InvalidToken
        except ValueError:
            raise ValueError("--push-secret-keys: a line is not a Fernet key (32 url-safe "
                             "base64 bytes; make one with `a2a-grpc push-secret-key`)") from None

    @classmethod
    def from_file(cls, path: Path) -> SecretBox:
        _fernet()  # the missing extra first: it is what to fix first
        try:
            lines = path.read_text().splitlines()
        except OSError as exc:
            raise ValueError(f"--push-secret-keys {path}: {exc.strerror}") from None
        return cls([line.strip().encode() for line in lines
                    if line.strip() and not line.lstrip().startswith("#")])

    @staticmethod
    def new_key() -> str:
        return str(_fernet().Fernet.generate_key().decode())

    def seal(self, secret: str) -> str:
        return SEALED + str(self._fernet.encrypt(secret.encode()).decode())

    def open(self, stored: str) -> str:
        if not stored.startswith(SEALED):
            return stored  # stored before sealing was on
        try:
            return str(self._fernet.decrypt(stored[len(SEALED):].encode()).decode())
        except self._invalid:
            raise SecretsError("sealed with a key --push-secret-keys no longer holds") from None


def open_secret(box: SecretBox | None, stored: str) -> str:
    """The credentials to send, from what the store holds."""
    if box is None:
        if stored.startswith(SEALED):
            raise SecretsError("sealed, and this server has no --push-secret-keys to open it")
        return stored
    return box.open(stored)
