"""Media types of message parts, and whether a card's input modes accept them
(spec §3.3.2: ContentTypeNotSupportedError for a part "not supported by the
agent or the specific skill being invoked").

A part's type is the one it declares (`mediaType`), else what its kind
implies: text is text/plain, data application/json, bytes or a URL
application/octet-stream. A mode accepts it when equal, ignoring case and
parameters (`text/plain; charset=utf-8`), or as a range: `image/*`, `*/*`.
A2A 1.0 has no field by which a message names a skill, so a part is accepted
when the card's defaultInputModes or any skill's inputModes accept it.

The spec says modes are media types, but cards written for the first draft
(whose parts were of kinds "text", "file" and "data", and whose samples wrote
`"defaultInputModes": ["text"]`), and the JavaScript SDK's samples, use bare
words. A card is never rewritten; a bare word is read as what those drafts
meant by it (`WORDS`): "text" any text/*, "data" (and "json") JSON, "file"
any type, and a top-level type name ("image", "audio", ...) that type's
range. Any other word accepts nothing, and `unknown_modes` names it so that
the server can say so at start.
"""

from __future__ import annotations

from collections.abc import Iterable

from a2a_grpc.generated.a2a_pb2 import AgentCard, Part

IMPLIED = {"text": "text/plain", "data": "application/json", "raw": "application/octet-stream",
           "url": "application/octet-stream"}


def media_type_of(part: Part) -> str:
    kind = part.WhichOneof("content")
    return part.media_type or IMPLIED.get(kind or "", "application/octet-stream")


# Bare words found in cards, read as the media range the early drafts meant.
WORDS = {"text": "text/*", "data": "application/json", "json": "application/json",
         "file": "*/*", "image": "image/*", "audio": "audio/*", "video": "video/*",
         "application": "application/*"}


def _essence(media_type: str) -> str:
    return media_type.split(";", 1)[0].strip().lower()


def _range(mode: str) -> str:
    """A card's mode as a media range: a bare word read through `WORDS`."""
    essence = _essence(mode)
    return essence if "/" in essence else WORDS.get(essence, essence)


def is_media_type(mode: str) -> bool:
    """`type/subtype` (a range or with parameters included), as the spec says a mode is."""
    main, _, sub = _essence(mode).partition("/")
    return bool(main) and bool(sub)


def unknown_modes(card: AgentCard) -> list[str]:
    """The card's modes (input and output, skills too) that are neither media
    types nor words in `WORDS`, once each, in order: they accept nothing."""
    found: list[str] = []
    modes = [*card.default_input_modes, *card.default_output_modes]
    for skill in card.skills:
        modes += [*skill.input_modes, *skill.output_modes]
    for mode in modes:
        if not is_media_type(mode) and _essence(mode) not in WORDS and mode not in found:
            found.append(mode)
    return found


def matches(media_type: str, modes: Iterable[str]) -> bool:
    wanted = _essence(media_type)
    kind = wanted.split("/", 1)[0]
    for mode in modes:
        accepted = _range(mode)
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
