"""Run by the official a2a-sdk's virtualenv: print its compiled a2a.proto
descriptor (FileDescriptorProto, serialized, base64) for the wire contract test."""

import base64

from a2a.types import a2a_pb2
from google.protobuf import descriptor_pb2

fd = descriptor_pb2.FileDescriptorProto()
a2a_pb2.DESCRIPTOR.CopyToProto(fd)
print(base64.b64encode(fd.SerializeToString()).decode())
