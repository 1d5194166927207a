"""Media types of message parts, and whether a card's input modes accept them
(spec §3.3.2: ContentTypeNotSupportedError for a part "not supported by the
agent or the specific skill being invoked").

A part's type is the one it declares (`mediaType`), else what its kind
implies: text is text/plain, data application/json, bytes or a URL
application/octet-stream. A mode accepts it when equal, ignoring case and
parameters (`text/plain; charset=utf-8`), or as a range: `image/*`, `*/*`.
A2A 1.0 has no field by which a message names a skill, so a part is accepted
when the card's defaultInputModes or any skill's inputModes accept it.
"""

from __future__ import annotations

from collections.abc import Iterable

from a2a_grpc.generated.a2a_pb2 import AgentCard, Part

IMPLIED = {"text": "text/plain", "data": "application/json", "raw": "application/octet-stream",
           "url": "application/octet-stream"}


def media_type_of(part: Part) -> str:
    kind = part.WhichOneof("content")
    return part.media_type or IMPLIED.get(kind or "", "application/octet-stream")


def _essence(media_type: str) -> str:
    return media_type.split(";", 1)[0].strip().lower()


def matches(media_type: str, modes: Iterable[str]) -> bool:
    wanted = _essence(media_type)
    kind = wanted.split("/", 1)[0]
    for mode in modes:
        accepted = _essence(mode)
        if accepted in (wanted, "*/*", "*") or accepted == f"{kind}/*":
            return True
    return False


def input_modes(card: AgentCard) -> list[str]:
    """Every mode the card accepts input in: its defaults, then its skills'."""
    modes = list(card.default_input_modes)
    for skill in card.skills:
        modes += [m for m in skill.input_modes if m not in modes]
    return modes


class _Answers:
    """The answers of `accepted` for the card it was last asked about."""

    card: AgentCard | None = None
    by_type: dict[str, bool] = {}


_answers = _Answers()
_MAX_ANSWERS = 64  # media types are the client's to choose: keep only so many


def accepted(media_type: str, card: AgentCard) -> bool:
    """`matches(media_type, input_modes(card))`, remembered while `card` is the
    same object: a served card is replaced when it changes, never changed in
    place (every incoming part is checked, and reading a card's skills costs
    more than the rest of the check)."""
    answers = _answers
    if answers.card is not card:
        answers.card, answers.by_type = card, {}
    answer = answers.by_type.get(media_type)
    if answer is None:
        answer = matches(media_type, input_modes(card))
        if len(answers.by_type) < _MAX_ANSWERS:
            answers.by_type[media_type] = answer
    return answer
