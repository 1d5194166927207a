"""Authentication from the agent card's security schemes (see gate.py).

JWT verification (`a2a_grpc.auth.jwt`: Jwks, JwtVerifier) needs the [auth]
extra and is imported from its module."""

from a2a_grpc.auth.apikey import ApiKeyVerifier
from a2a_grpc.auth.authenticated import AuthenticatedService
from a2a_grpc.auth.gate import Gate
from a2a_grpc.auth.identity import Identity, Verifier

__all__ = ["ApiKeyVerifier", "AuthenticatedService", "Gate", "Identity", "Verifier"]
