"""The checks ``replay-tui serve`` adds to textual-serve's server, which checks nothing itself.

Any web page the user visits can open a WebSocket to a loopback port, and a DNS-rebinding site can
even send it plain requests: so every request must carry the bound ``Host`` (or the public URL's),
every WebSocket the served ``Origin``, and the page, the socket and downloads a per-launch secret
token (given once as ``?token=``, then kept in an HttpOnly, SameSite=Strict cookie, as Jupyter does).
The server that applies them is :mod:`replay_tui.cli.serve_server` (it needs textual-serve).
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from aiohttp import web

MAX_WIDTH, MAX_HEIGHT = 500, 200
"""The largest terminal a browser may ask an app for (columns, rows)."""
PUBLIC_PATHS = ("/static/",)
"""textual-serve's own page assets (scripts, fonts, styles): the same for everyone, no token needed."""


def clamp_size(value: object, default: int, upper: int) -> int:
    """A terminal dimension from the browser, as an int in 1..upper (``default`` when not a number)."""
    try:
        number = int(value)  # type: ignore[call-overload]
    except (TypeError, ValueError, OverflowError):
        number = default
    return max(1, min(number, upper))


def url_host(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


@dataclass(frozen=True)
class Guard:
    """The origins and Host headers a request may carry, and the token it must show."""

    token: str
    hosts: frozenset[str]
    """``Host`` header values accepted (lower case, with the port when the URL has one)."""
    origins: frozenset[str]
    """``Origin`` header values accepted on the WebSocket."""
    cookie: str
    """The cookie that keeps the token (named for the port: cookies do not tell ports apart)."""

    @classmethod
    def build(cls, host: str, port: int, public_url: str, token: str) -> Guard:
        # only the name the page was served under: its cookie and its WebSocket URL hold for that name
        bound = f"{url_host(host)}:{port}".lower()
        hosts, origins = {bound}, {f"http://{bound}"}
        public = urlsplit(public_url)
        if public.hostname:
            netloc = public.netloc.rsplit("@", 1)[-1].lower()
            hosts.add(netloc)
            origins.add(f"{public.scheme.lower()}://{netloc}")
            default_port = {"http": 80, "https": 443}.get(public.scheme.lower())
            if public.port is not None and public.port == default_port:  # a browser leaves it out
                bare = url_host(public.hostname)
                hosts.add(bare)
                origins.add(f"{public.scheme.lower()}://{bare}")
        return cls(token, frozenset(hosts), frozenset(origins), f"replay_tui_token_{port}")

    def token_ok(self, given: str | None) -> bool:
        return given is not None and hmac.compare_digest(given.encode(), self.token.encode())

    def refusal(self, request: web.Request) -> str | None:
        """Why ``request`` is refused (one line), or None."""
        host = request.headers.get("Host", "").lower()
        if host not in self.hosts:
            return f"Host {host or '(none)'!r} is not this server's: open the URL replay-tui serve printed"
        if request.path.startswith(PUBLIC_PATHS):
            return None
        if request.path == "/ws":
            origin = request.headers.get("Origin", "").lower()
            if origin not in self.origins:
                return f"WebSocket Origin {origin or '(none)'!r} is not this server's"
        if not (self.token_ok(request.query.get("token")) or self.token_ok(request.cookies.get(self.cookie))):
            return "no valid token: open the URL replay-tui serve printed (it ends in ?token=...)"
        return None
