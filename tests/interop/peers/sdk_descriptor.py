"""Run by an official a2a-sdk's virtualenv: print its compiled a2a.proto
descriptor (FileDescriptorProto, serialized, base64) for the wire contract test.

Usage: python sdk_descriptor.py [MODULE]; MODULE defaults to the 1.x SDK's
`a2a.types.a2a_pb2`; the 0.3 line keeps its own in `a2a.grpc.a2a_pb2`.
"""

import base64
import importlib
import sys

from google.protobuf import descriptor_pb2

a2a_pb2 = importlib.import_module(sys.argv[1] if len(sys.argv) > 1 else "a2a.types.a2a_pb2")
fd = descriptor_pb2.FileDescriptorProto()
a2a_pb2.DESCRIPTOR.CopyToProto(fd)
print(base64.b64encode(fd.SerializeToString()).decode())
