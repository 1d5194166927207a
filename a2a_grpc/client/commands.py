"""The client verbs of the `a2a-grpc` command line.

    a2a-grpc card URL                          a2a-grpc get URL TASK
    a2a-grpc send URL TEXT [--file P] [--data J] [--context C] [--task T]
    a2a-grpc stream URL TEXT ...               a2a-grpc list URL [--status S] ...
    a2a-grpc cancel URL TASK                   a2a-grpc subscribe URL TASK
    a2a-grpc push set|get|list|delete URL TASK ...

Human output by default (states, artifacts: text inline, files saved, data
pretty-printed; a live progress line for streams on a terminal); `--json`
prints one JSON object per line. Exit status: 0 completed (or done), 1
failed/rejected/canceled, 2 usage, 3 input or auth required, 4 connection or
protocol errors.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import mimetypes
import os
import sys
from pathlib import Path
from typing import Any

import aiohttp
from google.protobuf import json_format

from a2a_grpc.cards.errors import CardSignatureError
from a2a_grpc.client.client import A2AClient
from a2a_grpc.client.credentials import ClientCredentialsGrant
from a2a_grpc.client.interrupt import INTERRUPTED, interruptible
from a2a_grpc.client.options import ClientOptions
from a2a_grpc.client.output import EXIT, Output, exit_for
from a2a_grpc.core.errors import A2AError
from a2a_grpc.generated import a2a_pb2 as pb

BINDINGS = {"grpc": "GRPC", "jsonrpc": "JSONRPC", "rest": "HTTP+JSON"}
VERBS = ("card", "send", "stream", "get", "list", "cancel", "subscribe", "push")


def add_commands(sub: Any) -> None:
    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("url", help="the agent's base URL (its card is read there) or grpc://H:P")
        p.add_argument("--binding", choices=sorted(BINDINGS),
                       help="use this binding (default: the card's first one we speak)")
        p.add_argument("--header", action="append", default=[], metavar="NAME:VALUE")
        p.add_argument("--api-key", help="sent as the card's API key scheme says")
        p.add_argument("--bearer", help="sent as Authorization: Bearer ...")
        p.add_argument("--user", help="HTTP Basic user; the password is $A2A_PASSWORD")
        p.add_argument("--client-id", help="OAuth 2 client credentials: this client, its "
                       "secret in $A2A_CLIENT_SECRET; the token endpoint is the card's")
        p.add_argument("--token-url", help="with --client-id: this token endpoint instead")
        p.add_argument("--scope", action="append", metavar="SCOPE",
                       help="with --client-id: ask for this scope (default: the card's)")
        p.add_argument("--tenant", help="tenant for every request (default: the interface's)")
        p.add_argument("--agent", metavar="NAME", help="on a server hosting several agents: "
                       "this one of its catalog (/.well-known/ai-catalog.json at the URL)")
        p.add_argument("--ca", metavar="PEM", help="trust this CA bundle (TLS)")
        p.add_argument("--cert", metavar="PEM", help="client certificate (mutual TLS)")
        p.add_argument("--key", metavar="PEM", help="its key (default: in --cert)")
        p.add_argument("--timeout", type=float, default=60.0, help="seconds per call")
        p.add_argument("--json", action="store_true", help="one JSON object per line")

    def message_flags(p: argparse.ArgumentParser) -> None:
        p.add_argument("text", help="the message text")
        p.add_argument("--file", action="append", default=[], type=Path,
                       help="attach a file (repeatable)")
        p.add_argument("--data", help="attach a JSON value as a data part")
        p.add_argument("--context", default="", help="contextId")
        p.add_argument("--task", default="", help="taskId: continue this task")
        p.add_argument("--out", type=Path, default=Path("."),
                       help="where files the agent returns are saved (default: .)")

    c = sub.add_parser("card", help="show an agent's card")
    common(c)
    c.add_argument("--verify", action="store_true",
                   help="check the card's signature (exit 5 when it does not verify)")
    c.add_argument("--jwks", metavar="URL", help="with --verify: the key set to trust")
    for name, helptext in (("send", "send a message, wait for the answer"),
                           ("stream", "send a message and follow it live")):
        p = sub.add_parser(name, help=helptext)
        common(p)
        message_flags(p)
        if name == "send":
            p.add_argument("--no-wait", action="store_true",
                           help="return once the task exists (returnImmediately)")
    for name, helptext in (("get", "show a task"), ("cancel", "cancel a task"),
                           ("subscribe", "follow a task live")):
        p = sub.add_parser(name, help=helptext)
        common(p)
        p.add_argument("task_id", metavar="TASK")
        p.add_argument("--out", type=Path, default=Path("."))
    ls = sub.add_parser("list", help="list tasks, newest first")
    common(ls)
    ls.add_argument("--context", default="")
    ls.add_argument("--status", help="e.g. working, completed, input_required")
    ls.add_argument("--page-size", type=int)
    ls.add_argument("--page-token", default="")
    ls.add_argument("--artifacts", action="store_true", help="include artifacts")
    push = sub.add_parser("push", help="webhook configs of a task")
    psub = push.add_subparsers(dest="push_command", required=True)
    for name in ("set", "get", "list", "delete"):
        p = psub.add_parser(name)
        common(p)
        p.add_argument("task_id", metavar="TASK")
        if name == "set":
            p.add_argument("hook", metavar="WEBHOOK_URL")
            p.add_argument("--id", default="", help="config id (default: server-assigned)")
            p.add_argument("--token", default="")
            p.add_argument("--auth-scheme", default="")
            p.add_argument("--auth-credentials", default="")
        elif name in ("get", "delete"):
            p.add_argument("config_id", metavar="CONFIG")


def options_of(args: argparse.Namespace) -> ClientOptions:
    headers = {}
    for item in args.header:
        name, sep, value = item.partition(":")
        if not sep or not name.strip():
            raise UsageError(f"--header wants NAME:VALUE, got {item!r}")
        headers[name.strip()] = value.strip()
    basic = grant = None
    if args.user:
        basic = (args.user, _secret("A2A_PASSWORD", "--user"))
    if args.client_id:
        grant = ClientCredentialsGrant(args.client_id, _secret("A2A_CLIENT_SECRET",
                                                               "--client-id"),
                                       args.token_url, args.scope)
    return ClientOptions(prefer=[BINDINGS[args.binding]] if args.binding else (),
                         headers=headers, api_key=args.api_key, bearer=args.bearer,
                         basic=basic, oauth2=grant,
                         tenant=args.tenant, agent=args.agent, timeout=args.timeout,
                         ca_file=args.ca,
                         cert_file=args.cert, key_file=args.key)


def _secret(variable: str, flag: str) -> str:
    """A secret from the environment (a command line is visible to every user)."""
    value = os.environ.get(variable)
    if not value:
        raise UsageError(f"{flag} needs the secret in ${variable}")
    return value


async def run(args: argparse.Namespace) -> int:
    out = Output(sys.stdout, args.json, getattr(args, "out", Path(".")))
    try:
        async with await A2AClient.connect(args.url, options_of(args)) as client:
            return await _verb(client, args, out)
    except A2AError as exc:
        print(f"a2a-grpc: {type(exc).__name__}: {exc.message}", file=sys.stderr)
        for v in exc.violations:
            print(f"  {v.field}: {v.description}", file=sys.stderr)
        return exit_for(exc)


async def _verify(client: A2AClient, args: argparse.Namespace) -> int:
    from a2a_grpc.client.verify import verify_card  # needs the [auth] extra

    async with aiohttp.ClientSession() as session:
        try:
            kid = await verify_card(client.card, args.url, session, args.jwks)
        except (CardSignatureError, aiohttp.ClientError, ValueError) as exc:
            print(f"a2a-grpc: the card's signature does not verify: {exc}", file=sys.stderr)
            return 5
    print(f"   signature: valid (key {kid})")
    return 0


async def _verb(client: A2AClient, args: argparse.Namespace, out: Output) -> int:
    verb = args.command
    if verb == "card":
        out.card(client.card, client.interface)
        if args.verify:
            return await _verify(client, args)
        return 0
    if verb in ("send", "stream"):
        req = client.text_request(args.text, task_id=args.task, context_id=args.context,
                                  parts=_attachments(args.file, args.data),
                                  return_immediately=getattr(args, "no_wait", False))
        if verb == "send":
            resp = await client.send_message(req)
            if resp.HasField("message"):
                out.message(resp.message)
                return 0
            out.task(resp.task)
            return EXIT.get(resp.task.status.state, 0)
        return await out.follow(client.send_streaming_message(req))
    if verb == "subscribe":
        return await out.follow(client.subscribe_to_task(pb.SubscribeToTaskRequest(
            id=args.task_id)))
    if verb == "get":
        task = await client.get_task(pb.GetTaskRequest(id=args.task_id))
        out.task(task)
        return EXIT.get(task.status.state, 0)
    if verb == "cancel":
        task = await client.cancel_task(pb.CancelTaskRequest(id=args.task_id))
        out.task(task)
        return 0
    if verb == "list":
        query = pb.ListTasksRequest(context_id=args.context, page_token=args.page_token)
        if args.status:
            query.status = _state(args.status)
        if args.page_size is not None:
            query.page_size = args.page_size
        if args.artifacts:
            query.include_artifacts = True
        out.listing(await client.list_tasks(query))
        return 0
    return await _push(client, args, out)


async def _push(client: A2AClient, args: argparse.Namespace, out: Output) -> int:
    sub = args.push_command
    if sub == "set":
        config = pb.TaskPushNotificationConfig(task_id=args.task_id, id=args.id, url=args.hook,
                                               token=args.token)
        if args.auth_scheme:
            config.authentication.scheme = args.auth_scheme
            config.authentication.credentials = args.auth_credentials
        out.config(await client.create_task_push_notification_config(config))
    elif sub == "get":
        out.config(await client.get_task_push_notification_config(
            pb.GetTaskPushNotificationConfigRequest(task_id=args.task_id, id=args.config_id)))
    elif sub == "list":
        listed = await client.list_task_push_notification_configs(
            pb.ListTaskPushNotificationConfigsRequest(task_id=args.task_id))
        for config in listed.configs:
            out.config(config)
    else:
        await client.delete_task_push_notification_config(
            pb.DeleteTaskPushNotificationConfigRequest(task_id=args.task_id,
                                                       id=args.config_id))
        out.line(f"deleted config {args.config_id} of task {args.task_id}",
                 {"deleted": args.config_id})
    return 0


def _state(name: str) -> pb.TaskState:
    try:
        return pb.TaskState.Value("TASK_STATE_" + name.upper())  # type: ignore[return-value]
    except ValueError:
        names = [pb.TaskState.Name(v).removeprefix("TASK_STATE_").lower()
                 for v in pb.TaskState.values() if v]
        raise UsageError(f"--status {name!r}: use one of {', '.join(names)}") from None


def _attachments(files: list[Path], data: str | None) -> list[pb.Part]:
    parts = []
    for path in files:
        try:
            raw = path.read_bytes()
        except OSError as exc:
            raise UsageError(f"cannot read {path}: {exc.strerror}") from None
        media = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        parts.append(pb.Part(raw=raw, filename=path.name, media_type=media))
    if data is not None:
        try:
            value = json.loads(data)
        except ValueError as exc:
            raise UsageError(f"--data is not JSON: {exc}") from None
        part = pb.Part(media_type="application/json")
        json_format.ParseDict(value, part.data)
        parts.append(part)
    return parts


SCHEMES = ("http://", "https://", "grpc://", "grpcs://")


class UsageError(Exception):
    """A flag's value that cannot be used: exit status 2, as argparse's own."""


def main_for(args: argparse.Namespace) -> int:
    if not args.url.startswith(SCHEMES):
        print(f"a2a-grpc: {args.url!r} is not an agent's URL: begin it with http://, "
              f"https://, grpc:// or grpcs:// (e.g. http://{args.url.split('://')[-1]})",
              file=sys.stderr)
        return 2  # a usage mistake, as argparse's own
    try:
        return asyncio.run(interruptible(run(args)))  # Ctrl-C: 130 (interrupt.py)
    except UsageError as exc:
        print(f"a2a-grpc: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl-C before the loop ran
        return INTERRUPTED


