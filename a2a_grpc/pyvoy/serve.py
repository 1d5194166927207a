"""`serve --grpc-carrier pyvoy`: the server carried by pyvoy (Envoy's
HTTP/2 with the app in its embedded Python): gRPC, JSON-RPC and HTTP+JSON
on `--http-port` and `--grpc-port` alike (one listener, two addresses),
h2c and HTTP/1.1 told apart by Envoy. This process starts
Envoy with the app (pyvoy/app.py, which reads the same command line
from CARRIED_ARGV), says where it listens, passes SIGHUP on to the app, and
stops it on SIGTERM/SIGINT. Under `serve --workers N` each worker is such
a process, its Envoy on the ports the supervisor holds (app/workers.py).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import urllib.request
from collections.abc import Sequence
from typing import Any
from urllib.parse import quote

from a2a_grpc.app import process
from a2a_grpc.app.http import http_interfaces
from a2a_grpc.app.options import drain_notice, http_options
from a2a_grpc.app.settings import ServeSettings
from a2a_grpc.app.tls import TlsFiles
from a2a_grpc.cards.card import host_port
from a2a_grpc.core.extras import MissingExtraError, missing
from a2a_grpc.core.ports import PortInUseError, claim, reserve
from a2a_grpc.pyvoy.drain import FOLDER, Asker
from a2a_grpc.pyvoy.envoy import EnvoyOutput, envoy_apart
from a2a_grpc.pyvoy.tls import EnvoyTls
from a2a_grpc.stores import StoreInUseError, StoreOpenError

log = logging.getLogger("a2a_grpc")
CARRIED_ARGV = "A2A_GRPC_CARRIED_ARGV"  # the `serve` command line, for the carried app
APP = "a2a_grpc.pyvoy.app:app"
STOPPING = 5.0  # seconds for what is left once the app has drained
FAILED = "failed"  # in the FIFOs' folder: why the app could not start (pyvoy/app.py: told)
# What the app cannot start for that its message says in full, as `serve` on grpc.aio.
PLAIN = (ValueError, MissingExtraError, StoreInUseError, StoreOpenError, PortInUseError)




async def close_connections(admin: str | None) -> None:
    """Every answer from now on closes its connection (HTTP/1.1's `Connection:
    close`, HTTP/2's GOAWAY), as a draining `serve` on aiohttp does, so that
    clients open their next one, through their balancer, elsewhere. Envoy drops
    the app's own `Connection: close`; failing its health checks is what drains
    its connections (Envoy's "Draining"). `admin`: Envoy's admin address, which
    pyvoy keeps (None: nothing to ask)."""
    await _ask_envoy(admin, "/healthcheck/fail")


async def stop_listening(admin: str | None) -> None:
    """Envoy takes no new connection (its listeners stop: all of them, as
    pyvoy's name no direction for `inboundonly` to pick); the open ones are
    answered, refused, each then closed."""
    await _ask_envoy(admin, "/drain_listeners")


async def _ask_envoy(admin: str | None, path: str) -> None:
    if admin:
        try:
            await asyncio.to_thread(_admin, admin, "POST", path)
        except OSError as exc:  # Envoy gone
            log.warning("could not drain Envoy (%s %s)", path, exc)


async def until_idle(admin: str | None, within: float) -> None:
    """Until Envoy has no call in progress, `within` s at most."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    try:
        while admin and loop.time() < deadline:
            stats = json.loads(await asyncio.to_thread(_admin, admin, "GET", ACTIVE))
            if not any(s.get("value") for s in stats.get("stats", ())):
                return
            await asyncio.sleep(0.05)
        log.info("%g s more are over: stopping with calls in progress", within)
    except (OSError, ValueError) as exc:  # Envoy gone, or an admin answer not understood
        log.warning("could not watch Envoy's calls (%s): stopping it", exc)


ACTIVE = "/stats?format=json&filter=" + quote(r"^http\.ingress_http\.downstream_rq_active$")


def _admin(admin: str, method: str, path: str) -> bytes:
    request = urllib.request.Request(f"http://{admin}{path}", method=method)
    with urllib.request.urlopen(request, timeout=5) as answer:
        body: bytes = answer.read()
        return body


async def carry(argv: Sequence[str], settings: ServeSettings) -> int:
    """Run the carried server until a signal stops it; its exit code."""
    try:
        from pyvoy import PyvoyServer
    except ImportError as exc:
        raise missing(exc, "--grpc-carrier pyvoy", "pyvoy") from None
    net = settings.network
    tls: dict[str, Any] = {}
    if net.tls_cert is not None and net.tls_key is not None:
        tls = {"tls_cert": net.tls_cert, "tls_key": net.tls_key, "tls_enable_http3": False}
        if net.tls_client_ca is not None:
            tls.update(tls_ca_cert=net.tls_client_ca,
                       tls_require_client_certificate=net.tls_require_client_cert)
    # The ports are held here first (port 0 picks them) and Envoy listens on
    # them beside these sockets (SO_REUSEPORT, as under --workers): the app is
    # told both before it starts, and its card names them. Under --workers the
    # supervisor holds them already; a server alone finds them unserved first.
    if process.worker() is None:
        held = claim(net.host, net.http_port, net.grpc_port)
    else:
        held = [reserve(net.host, net.http_port), reserve(net.host, net.grpc_port)]
    ports = [sock.getsockname()[1] for sock in held]
    loop = "asyncio" if net.loop == "asyncio" else "uvloop"
    log.info("event loop: %s (the app's, in Envoy)", loop)
    asker = Asker()
    output = EnvoyOutput()
    try:
        await output.open()
        envoy_tls = None
        if net.tls_cert is not None and net.tls_key is not None:
            envoy_tls = EnvoyTls(TlsFiles(net.tls_cert, net.tls_key, net.tls_client_ca,
                                          net.tls_require_client_cert), asker.folder / "tls")
            if not envoy_tls.write():
                raise ValueError(f"--tls-cert/--tls-key: cannot load {net.tls_cert}")
        server = _configured(PyvoyServer, net.host, ports[1], envoy_tls)(
            APP, address=net.host, port=ports[0], worker_threads=1, lifespan=True,
            loop=loop, log_level="error",
            env={CARRIED_ARGV: json.dumps([*argv, "--http-port", str(ports[0]),
                                           "--grpc-port", str(ports[1])]),
                 FOLDER: str(asker.folder), process.WORKER_PID: str(os.getpid())},
            stdout=None, stderr=output.fd, **tls)
        await _started(server, asker, output)
        return await _carried(server, asker, settings, ports, envoy_tls)
    finally:
        await output.close()
        asker.close()
        for sock in held:
            sock.close()


def _configured(pyvoy_server: type, host: str, port: int, tls: EnvoyTls | None) -> type:
    """pyvoy's server, gRPC's port a second address of its one listener (a
    second listener would start the app a second time), and TLS from files
    `serve` replaces (tls.py)."""
    class Carrier(pyvoy_server):  # type: ignore[misc]
        def get_envoy_config(self) -> dict[str, Any]:
            config: dict[str, Any] = super().get_envoy_config()
            listener = config["static_resources"]["listeners"][0]
            if listener["address"]["socket_address"]["port_value"] != port:
                listener["additional_addresses"] = [
                    {"address": {"socket_address": {"address": host, "port_value": port}}}]
            if tls is not None:
                tls.configure(config)
            return config

    return Carrier


def _reload(asker: Asker, tls: EnvoyTls | None) -> None:
    """SIGHUP: the app reloads its credentials files (drain.py), and
    Envoy its certificate (tls.py)."""
    asker.reload()
    if tls is not None:
        tls.reload()


async def _started(server: Any, asker: Asker, output: EnvoyOutput) -> None:
    """Envoy started, in a group of its own (envoy.py); process.StartFailure
    with the app's reason when it did not start."""
    try:
        with envoy_apart(asker.folder):
            await server.start()
    except Exception:
        await output.close()
        failed = asker.folder / FAILED
        if failed.exists():
            code, _, text = failed.read_text().partition("\n")
            raise process.StartFailure(text, int(code)) from None
        output.failed()
        raise
    output.spawned()
    output.live()


async def _carried(server: Any, asker: Asker, settings: ServeSettings, ports: list[int],
                   tls: EnvoyTls | None) -> int:
    net = settings.network
    worker = process.worker()  # under --workers the supervisor says "listening" once all are
    log.info("%s: gRPC on %s, %s on %s (carried by pyvoy: every binding on both)",
             "listening" if worker is None else f"worker {worker} ready",
             host_port(net.host, ports[1]), "HTTPS" if tls is not None else "HTTP",
             host_port(net.host, ports[0]))
    if not settings.observability.no_inspector and worker in (None, 1):
        page = http_interfaces(http_options(net), ports[0])[1].url + "/inspector"
        log.info("the inspector: open %s in a browser", page)
    process.notify("READY=1")
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stopping.set)
    loop.add_signal_handler(signal.SIGHUP, _reload, asker, tls)
    watching = asyncio.ensure_future(tls.watch() if tls is not None else asyncio.sleep(0))
    waiting = asyncio.ensure_future(server.wait())
    stop = asyncio.ensure_future(stopping.wait())
    await asyncio.wait((waiting, stop), return_when=asyncio.FIRST_COMPLETED)
    if not waiting.done():
        process.notify("STOPPING=1")
        notice = drain_notice(net, bool(settings.store.bus))
        admin = getattr(server, "_admin_address", None)  # where pyvoy keeps Envoy's admin
        asked = asyncio.ensure_future(asker.drain(notice + net.grace + STOPPING))
        await close_connections(admin)
        # Calls are refused from the notice's end, as on aiohttp: new
        # connections then go to the other workers, or are refused.
        await asyncio.wait((asked,), timeout=notice)
        await stop_listening(admin)
        await until_idle(admin, STOPPING if await asked else 0)  # asked: as serve's drain
        await server.stop()
    stop.cancel()
    watching.cancel()
    code = await waiting
    if stopping.is_set():
        log.info("stopped")
    return 0 if code in (0, -signal.SIGTERM) else (code or 0)

