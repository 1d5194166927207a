"""Authentication from the agent card's security schemes (see gate.py)."""

from a2a_grpc.auth.apikey import ApiKeyVerifier
from a2a_grpc.auth.authenticated import AuthenticatedService
from a2a_grpc.auth.gate import Gate
from a2a_grpc.auth.identity import Identity, Verifier
from a2a_grpc.auth.jwt import Jwks, JwtVerifier

__all__ = ["ApiKeyVerifier", "AuthenticatedService", "Gate", "Identity", "Jwks", "JwtVerifier",
           "Verifier"]
