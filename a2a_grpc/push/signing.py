"""Signed notifications: the server's keys, the JWT it attaches, and its JWKS.

Each notification may carry a JWT (ES256 or RS256) with claims `iss` (the
agent's public URL), `aud` (the webhook URL), `iat`, `exp`, `jti` (unique per
notification), `taskId` and `body_sha256` (base64url SHA-256 of the exact
body). The public keys are published as a JWKS; every key found in the key
directory stays published, so rotating (add a new key, remove the old one
later) never breaks verification of notifications already in flight.
"""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from a2a_grpc.core.extras import missing
from a2a_grpc.push.digest import HEADER, b64url, body_digest

try:
    import jwt
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec, rsa
except ImportError as exc:
    raise missing(exc, "signing keys (--push-keys, --card-keys)", "auth") from None

__all__ = ["HEADER", "Signer", "SigningKey", "body_digest", "load_keys"]


@dataclass(frozen=True, slots=True)
class SigningKey:
    kid: str
    alg: str  # ES256 or RS256
    private: Any
    public_jwk: dict[str, Any]

    @classmethod
    def from_pem(cls, pem: bytes) -> SigningKey:
        private = serialization.load_pem_private_key(pem, password=None)
        if isinstance(private, ec.EllipticCurvePrivateKey):
            if not isinstance(private.curve, ec.SECP256R1):
                raise ValueError("EC signing keys must be P-256 (ES256)")
            alg, jwk = "ES256", json.loads(jwt.algorithms.ECAlgorithm.to_jwk(private.public_key()))
            members = {k: jwk[k] for k in ("crv", "kty", "x", "y")}
        elif isinstance(private, rsa.RSAPrivateKey):
            alg, jwk = "RS256", json.loads(
                jwt.algorithms.RSAAlgorithm.to_jwk(private.public_key()))
            members = {k: jwk[k] for k in ("e", "kty", "n")}
        else:
            raise ValueError("signing keys must be EC P-256 or RSA")
        # RFC 7638 thumbprint as the key id.
        kid = b64url(hashlib.sha256(json.dumps(members, separators=(",", ":"),
                                               sort_keys=True).encode()).digest())
        return cls(kid, alg, private, {**jwk, "kid": kid, "alg": alg, "use": "sig"})


def load_keys(directory: Path, create: bool = True, prefix: str = "push") -> list[SigningKey]:
    """Every `*.pem` in `directory`, newest first (the newest signs). With none,
    a P-256 key is generated there (`create`)."""
    directory.mkdir(parents=True, exist_ok=True)
    files = sorted(directory.glob("*.pem"), key=lambda p: p.stat().st_mtime, reverse=True)
    if not files and create:
        key = ec.generate_private_key(ec.SECP256R1())
        path = directory / f"{prefix}-{int(time.time())}.pem"
        path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
        path.chmod(0o600)
        files = [path]
    return [SigningKey.from_pem(p.read_bytes()) for p in files]


class Signer:
    def __init__(self, keys: list[SigningKey], issuer: str, ttl_s: int = 300) -> None:
        if not keys:
            raise ValueError("a Signer needs at least one key")
        self.keys = keys
        self.issuer = issuer
        self.ttl_s = ttl_s

    def sign(self, audience: str, task_id: str, body: bytes) -> str:
        key = self.keys[0]
        now = int(time.time())
        claims = {"iss": self.issuer, "aud": audience, "iat": now, "exp": now + self.ttl_s,
                  "jti": str(uuid.uuid4()), "taskId": task_id, "body_sha256": body_digest(body)}
        return jwt.encode(claims, key.private, algorithm=key.alg, headers={"kid": key.kid})

    def jwks(self) -> dict[str, Any]:
        return {"keys": [k.public_jwk for k in self.keys]}
