"""Who may use the page of ``humanoid view``: the page this run serves, and nothing else.

The page moves the robot (its sliders publish ``joint_commands``), and a browser lets any
web site the user visits open a websocket to any address, the loopback one included. So:

- the page is served only under this run's token, a random path printed at start-up
  (``http://127.0.0.1:8080/<token>/``): a site elsewhere cannot guess it;
- a websocket is accepted only at that path and from the page's own origin (``Origin:
  http://<an address of this server>:<port>``): a browser always sends the origin of the
  page that opens a websocket, and a script in the page cannot change it. Names that only
  resolve to this computer through someone else's DNS (rebinding) are not its origins.

Everything else is refused with HTTP 403 before viser sees it, logged once per reason.

viser 1.1.1 has no hook into its handshake: while :class:`viser.ViserServer` starts, its
server thread calls ``websockets.asyncio.server.serve(..., process_request=<viser's file
server>)``. :func:`start_server` substitutes that function for those moments with one
that puts :meth:`PageAccess.check` in front of viser's ``process_request``, restores it,
and stops if viser did not call it (a viser starting its server otherwise is refused,
not served open).
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import http
import io
import ipaddress
import secrets
import socket
import struct
import sys
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from humanoid_tools.view.page_input import report_page_errors

if TYPE_CHECKING:
    from websockets.asyncio.server import ServerConnection
    from websockets.http11 import Request, Response

    ProcessRequest = Callable[[ServerConnection, Request], Response | None]

TOKEN_BYTES = 18  # 144 random bits, 24 URL-safe characters
MAX_LOGGED_REASONS = 20  # distinct refusals logged; a page retrying forever does not flood the log
WILDCARD_HOSTS = ("", "0.0.0.0", "::")
SIOCGIFADDR = 0x8915  # Linux ioctl: an interface's IPv4 address


class PageAccess:
    """The check in front of viser's HTTP and websocket handshake (see the module's text)."""

    def __init__(self, hosts: Sequence[str], token: str | None = None) -> None:
        """``hosts``: the names and addresses the page is reached at (the first is printed first)."""
        self.hosts = tuple(dict.fromkeys(hosts))
        self.token = token if token is not None else secrets.token_urlsafe(TOKEN_BYTES)
        self.port = 0  # known once the server is bound
        self.refusals = RefusalLog()
        self._loop_ready = False

    @classmethod
    def for_host(cls, host: str) -> PageAccess:
        """The access of a server listening on ``host`` (``--host``)."""
        if host in WILDCARD_HOSTS:
            return cls(["127.0.0.1", "localhost", *interface_addresses(), socket.gethostname(),
                        *(["::1"] if host == "::" else [])])
        if is_loopback(host):
            return cls([host, "127.0.0.1", "localhost"])
        return cls([host])

    def urls(self) -> list[str]:
        """The page's address at each host (with the token)."""
        return [f"{_origin(host, self.port)}/{self.token}/" for host in self.hosts]

    def origins(self) -> set[str]:
        return {_origin(host, self.port).lower() for host in self.hosts}

    def wrap(self, serve_files: ProcessRequest | None) -> ProcessRequest:
        """viser's ``process_request`` with the check in front of it."""

        def process_request(connection: ServerConnection, request: Request) -> Response | None:
            if not self._loop_ready:  # the first handshake runs on viser's event loop
                import asyncio

                report_page_errors(asyncio.get_running_loop())
                self._loop_ready = True
            refusal, request = self.check(request)
            if refusal is not None:
                self.refusals.report(refusal)
                return connection.respond(http.HTTPStatus.FORBIDDEN,
                                          f"humanoid view refused {refusal}: open the address it printed\n")
            return serve_files(connection, request) if serve_files is not None else None

        return process_request

    def check(self, request: Request) -> tuple[str | None, Request]:
        """``(None, the request for viser)`` when allowed (the token's path taken off), else
        ``(why it is refused, request)``."""
        path, _, _query = request.path.partition("?")
        rest = self._under_token(path)
        upgrades = request.headers.get_all("Upgrade")
        if len(upgrades) > 1:
            return "a request with several Upgrade headers", request
        if not upgrades or upgrades[0].lower() != "websocket":
            if rest is None:
                return "a page request without this run's token", request
            return None, dataclasses.replace(request, path=rest)
        origins = request.headers.get_all("Origin")
        if len(origins) != 1:
            return "a websocket without exactly one Origin header (not opened by a web page)", request
        if origins[0].lower() not in self.origins():
            return f"a websocket opened by a page of {origins[0]!r}, not by this page", request
        if rest != "/":
            return "a websocket without this run's token", request
        return None, request

    def _under_token(self, path: str) -> str | None:
        """The path without its leading ``/<token>``; None when it does not start with it."""
        head, slash, rest = path.removeprefix("/").partition("/")
        if not secrets.compare_digest(head.encode(), self.token.encode()):
            return None
        return "/" + rest if slash else "/"



class RefusalLog:
    """Refusals on stderr, each reason once and at most ``limit`` reasons: a page that
    retries forever, or a client that changes its origin each time, does not flood the log."""

    def __init__(self, limit: int = MAX_LOGGED_REASONS) -> None:
        self.limit = limit
        self._logged: set[str] = set()
        self._lock = threading.Lock()

    def report(self, refusal: str) -> None:
        with self._lock:
            if refusal in self._logged or len(self._logged) >= self.limit:
                return
            self._logged.add(refusal)
            last = len(self._logged) == self.limit
        print(f"humanoid view: refused {refusal}" + (" (further refusals are not logged)" if last else ""),
              file=sys.stderr, flush=True)


def host_and_port(host: str, port: int) -> str:
    """``host:port`` as in a URL (an IPv6 address in brackets)."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _origin(host: str, port: int) -> str:
    return f"http://{host_and_port(host, port)}"


def is_loopback(host: str) -> bool:
    """Whether every address ``host`` names is a loopback one (False when it names none)."""
    try:
        addresses = {info[4][0] for info in socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)}
    except (socket.gaierror, UnicodeError):
        return False
    return bool(addresses) and all(ipaddress.ip_address(a.partition("%")[0]).is_loopback for a in addresses)


def listen_problem(host: str) -> str | None:
    """Why this computer cannot listen on ``host``; None when it can (checked before viser
    starts: viser would otherwise wait forever for a socket it can never bind)."""
    try:
        infos = socket.getaddrinfo(host or None, 0, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError) as error:
        return f"unknown host {host!r} ({getattr(error, 'strerror', None) or error})"
    for family, kind, protocol, _name, address in infos:
        with socket.socket(family, kind, protocol) as probe:
            try:
                probe.bind(address)
            except OSError as error:
                return f"cannot listen on {host!r}: {error.strerror} (not an address of this computer?)"
    return None


def interface_addresses() -> list[str]:
    """The IPv4 address of each network interface of this computer but the loopback one
    (Linux; none elsewhere)."""
    addresses = []
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        for _index, name in socket.if_nameindex():
            with contextlib.suppress(OSError):  # an interface without an IPv4 address
                answer = fcntl.ioctl(probe.fileno(), SIOCGIFADDR, struct.pack("256s", name.encode()[:15]))
                address = socket.inet_ntoa(answer[20:24])
                if not ipaddress.ip_address(address).is_loopback:
                    addresses.append(address)
    return addresses


def start_server(host: str, port: int, access: PageAccess, label: str):
    """A :class:`viser.ViserServer` on ``host``:``port`` that only ``access`` lets in; returns
    it with the addresses its sockets are bound to (``(address, port)`` pairs)."""
    import viser
    import websockets.asyncio.server as websocket_server

    original = websocket_server.serve
    started: list = []

    def serve(*args, process_request=None, **kwargs):
        started.append(original(*args, process_request=access.wrap(process_request), **kwargs))
        return started[-1]

    websocket_server.serve = serve
    try:
        # viser's banner names the address without the token, which the page refuses: the
        # command prints the one address that works, and nothing else
        with contextlib.redirect_stdout(io.StringIO()):
            server = viser.ViserServer(host=host, port=port, label=label, verbose=False)
    finally:
        websocket_server.serve = original
    if not started:
        stop_server(server)
        raise RuntimeError(f"viser {viser.__version__} started its server without the page's access check; "
                           "humanoid view supports viser 1.1.1")
    # viser's share button opens a tunnel through its public relay: whoever came through it
    # would be refused (not the page's origin), so the page does not offer it
    server.gui.configure_theme(show_share_button=False)
    access.port = server.get_port()
    bound = [tuple(s.getsockname()[:2]) for s in started[-1].server.sockets]
    return server, bound


def stop_server(server) -> None:
    """Stop the page's server without viser's own message on stdout."""
    with contextlib.redirect_stdout(io.StringIO()):
        server.stop()
