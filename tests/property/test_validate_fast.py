"""The compiled request checker (core.validate.is_valid) accepts exactly what
the full walk finds nothing wrong with, on every A2A message type: it decides
alone for valid requests, so a rule it missed would let a bad one through.

Messages come from test_protojson's generator (any field set or not, nested
to depth 3), so required fields are often missing, parts often empty, and
push URLs arbitrary text.
"""

from __future__ import annotations

import pytest
from google.protobuf.message import Message
from hypothesis import given, settings
from hypothesis import strategies as st

from a2a_grpc.core.errors import InvalidParamsError
from a2a_grpc.core.validate import is_valid, validate, violations
from a2a_grpc.generated import a2a_pb2 as pb

from .test_protojson import messages


@settings(max_examples=400, deadline=None)
@given(msg=messages())
def test_the_checker_agrees_with_the_walk(msg: Message) -> None:
    assert is_valid(msg) == (not violations(msg))


@settings(max_examples=100, deadline=None)
@given(url=st.sampled_from(["", "https://x", "http://x", "ftp://x", "x", "https:/"]),
       text=st.sampled_from(["", "hi"]), message_id=st.sampled_from(["", "m"]))
def test_requests_near_the_rules(url: str, text: str, message_id: str) -> None:
    """The rules the marks can't say (a part's content, a push URL), at their edges."""
    msg = pb.Message(message_id=message_id, role=pb.ROLE_USER,
                     parts=[pb.Part(text=text)] if text else [pb.Part()])
    req = pb.SendMessageRequest(message=msg)
    if url:
        req.configuration.task_push_notification_config.url = url
    bad = (not message_id or not text
           or (url != "" and not url.startswith(("https://", "http://"))))
    assert is_valid(req) == (not bad) == (not violations(req))
    if bad:
        with pytest.raises(InvalidParamsError):
            validate(req)
    else:
        validate(req)
