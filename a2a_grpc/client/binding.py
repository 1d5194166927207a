"""Which transport calls the interface the client chose: its binding, and its
A2A version (an interface for 0.3 only gets the 0.3 transports, v03.py)."""

from __future__ import annotations

from collections.abc import Mapping

import aiohttp

from a2a_grpc.client.grpc_transport import GrpcTransport
from a2a_grpc.client.options import ClientOptions
from a2a_grpc.client.tls import grpc_credentials
from a2a_grpc.client.transports import JsonRpcTransport, RestTransport, Transport
from a2a_grpc.client.v03 import Grpc03Transport, Rest03Transport
from a2a_grpc.client.v03_jsonrpc import JsonRpc03Transport
from a2a_grpc.generated import a2a_pb2 as pb


def transport_for(interface: pb.AgentInterface, options: ClientOptions,
                  session: aiohttp.ClientSession, params: Mapping[str, str],
                  secure: bool) -> Transport:
    """`params`: query parameters every HTTP call carries (an API key);
    `secure`: the card came over TLS, so gRPC uses TLS too."""
    binding = interface.protocol_binding
    v03 = interface.protocol_version.startswith("0.3")
    if binding == "GRPC":
        credentials = None
        if secure or options.tls:
            credentials = grpc_credentials(options.ca_file, options.cert_file, options.key_file)
        target = interface.url.removeprefix("grpcs://").removeprefix("grpc://")
        return (Grpc03Transport if v03 else GrpcTransport)(target, credentials, options.record)
    if binding == "JSONRPC":
        return (JsonRpc03Transport if v03 else JsonRpcTransport)(session, interface.url, params)
    return (Rest03Transport if v03 else RestTransport)(session, interface.url, params)
