"""The inspector's card view: the card as fetched, checked against A2A 1.0
(a2a_grpc.cards.check), and each interface probed.

A probe is a GetTask for an id no task has, with the page's headers, over
that interface alone: any A2A answer (TaskNotFoundError, as a rule) shows the
interface is there and speaks its binding; a refusal for credentials says
the headers are missing; no answer, or one that is not A2A, is an error.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Mapping
from typing import Any

from google.protobuf import json_format

from a2a_grpc.cards.check import BINDINGS, Finding, check_card
from a2a_grpc.client import A2AClient, ClientOptions
from a2a_grpc.client.errors import AgentUnreachableError, BadResponseError
from a2a_grpc.core.errors import (
    A2AError,
    PermissionDeniedError,
    TaskNotFoundError,
    UnauthenticatedError,
)
from a2a_grpc.generated import a2a_pb2 as pb

PROBE_TIMEOUT = 5.0


def parse(raw: Any) -> pb.AgentCard:
    """As much of the card as parses, for the page to show beside the findings."""
    card = pb.AgentCard()
    try:
        json_format.ParseDict(raw if isinstance(raw, dict) else {}, card,
                              ignore_unknown_fields=True)
    except json_format.ParseError:
        card.Clear()  # the findings say why
    return card


async def findings(raw: Any, card: pb.AgentCard, headers: Mapping[str, str],
                   secure: bool) -> list[Finding]:
    """What check_card finds, then what the probes find."""
    probes = [_probe(card, i, headers, secure) for i, face in
              enumerate(card.supported_interfaces)
              if face.protocol_binding in BINDINGS and face.protocol_version.startswith("1.")]
    found = check_card(raw)
    found += await asyncio.gather(*probes)
    order = {"error": 0, "warning": 1, "info": 2}
    return sorted(found, key=lambda f: order[f.level])


async def _probe(card: pb.AgentCard, index: int, headers: Mapping[str, str],
                 secure: bool) -> Finding:
    face = card.supported_interfaces[index]
    where, binding = f"supportedInterfaces[{index}]", face.protocol_binding
    alone = pb.AgentCard()
    alone.CopyFrom(card)
    del alone.supported_interfaces[:]
    alone.supported_interfaces.add().CopyFrom(face)
    options = ClientOptions(prefer=[binding], headers=dict(headers), retries=0,
                            timeout=PROBE_TIMEOUT, record=True)
    try:
        client = A2AClient.from_card(alone, options, secure=secure)
    except A2AError as exc:
        return Finding("error", where, f"{binding} {face.url}: {exc.message}")
    try:
        await asyncio.wait_for(client.get_task(pb.GetTaskRequest(
            id=f"inspector-probe-{uuid.uuid4().hex[:8]}")), PROBE_TIMEOUT)
    except TaskNotFoundError:
        return Finding("info", where, f"{binding} {face.url} answers A2A (GetTask of an "
                       "unknown id: TaskNotFoundError)")
    except (UnauthenticatedError, PermissionDeniedError) as exc:
        return Finding("warning", where, f"{binding} {face.url} answers, but refuses these "
                       f"credentials ({exc.message}): set them under Headers")
    except AgentUnreachableError as exc:
        return Finding("error", where, f"{binding} {face.url} is not reachable: {exc.message}")
    except BadResponseError as exc:
        return Finding("error", where, f"{binding} {face.url} answers, but not A2A: "
                       f"{exc.message}")
    except A2AError as exc:
        return Finding("info", where, f"{binding} {face.url} answers A2A ({type(exc).__name__}: "
                       f"{exc.message})")
    except TimeoutError:
        return Finding("error", where, f"{binding} {face.url}: no answer in {PROBE_TIMEOUT:g} s")
    except Exception as exc:  # e.g. a URL no client can call: a finding, not a failed check
        return Finding("error", where, f"{binding} {face.url} cannot be called: "
                       f"{type(exc).__name__}: {exc}")
    finally:
        await client.close()
    return Finding("warning", where, f"{binding} {face.url} returned a task for an id nobody "
                   "made")
