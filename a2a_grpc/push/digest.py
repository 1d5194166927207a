"""What a signed notification and its receiver agree on without any JWT code:
the header the signature travels in and the body's digest (its `body_sha256`
claim). Kept apart from signing.py so that the sender, the card and the
receiver's checks load without the [auth] extra."""

from __future__ import annotations

import base64
import hashlib

HEADER = "A2A-Notification-Signature"


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def body_digest(body: bytes) -> str:
    return b64url(hashlib.sha256(body).digest())
