"""Helpers shared by the peer scripts that run in the official 0.3 SDK's virtualenv."""

import uuid

from a2a.types import Message, Part, Role, TextPart


def msg(text, task_id=None):
    return Message(role=Role.user, parts=[Part(root=TextPart(text=text))],
                   message_id=str(uuid.uuid4()), task_id=task_id)


def kind(event):
    """What the event was: the client hands (task so far, update) pairs, and the
    task object goes on changing, so only the update says what arrived."""
    if isinstance(event, Message):
        return "message"
    _, update = event
    if update is None:
        return "task"
    if update.kind == "status-update":
        return f"status-update:{update.status.state.value}:final={update.final}"
    return f"artifact-update:{update.artifact.parts[0].root.text}"
