"""Helpers shared by the peer scripts that run in the official SDK's virtualenv."""

import uuid

from a2a.types import a2a_pb2 as pb


def msg(text, task_id=""):
    return pb.Message(message_id=str(uuid.uuid4()), role=pb.ROLE_USER,
                      parts=[pb.Part(text=text)], task_id=task_id)


def state(task):
    return pb.TaskState.Name(task.status.state)


def kinds(events):
    """`task:STATE`, `STATE` for status updates, else the payload kind."""
    out = []
    for e in events:
        k = e.WhichOneof("payload")
        if k == "status_update":
            k = pb.TaskState.Name(e.status_update.status.state)
        elif k == "task":
            k = "task:" + state(e.task)
        out.append(k)
    return out


async def error_of(coro):
    """The class name of the error `coro` raises (the SDK's typed errors), or None."""
    try:
        await coro
    except Exception as exc:
        return type(exc).__name__
    return None
