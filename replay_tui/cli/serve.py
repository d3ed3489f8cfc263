"""``replay-tui serve``: the debugger in a web browser, through ``textual-serve``.

Each browser that connects gets its own app process, started with the same arguments as
``replay-tui tui`` would be (rebuilt from the parsed flags, quoted with :func:`shlex.join`). The
server has no authentication of its own: it listens on loopback unless ``--public`` says otherwise,
and the README says how to put it behind an authenticating reverse proxy.
"""

from __future__ import annotations

import argparse
import ipaddress
import shlex
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.text import Text

from replay_tui.cli.common import EXIT_OK, UsageError

if TYPE_CHECKING:
    from replay_tui.tui.app import ReplayApp

AppCheck = Callable[[argparse.Namespace], "ReplayApp"]
"""Builds the app the flags ask for, or raises :class:`UsageError` (``cli.main.tui_app``)."""

SERVE_FLAGS = ("host", "port", "public", "public_url")
"""The dests of serve's own flags: everything else is handed to each app process."""
PROXY_HINT = (
    "the server has no authentication of its own: keep it on 127.0.0.1 behind a reverse proxy that "
    "authenticates (nginx or Caddy basic auth, oauth2-proxy), or add --public to bind {host} anyway"
)


def register(subparsers: Any, tui: argparse.ArgumentParser, check_app: AppCheck) -> None:
    """Add ``serve``: every flag of ``tui`` (the parser is copied, so the two never drift) and the server's own.

    ``check_app`` builds the app from the flags, raising :class:`UsageError`, so a bad flag or an
    unreadable file is refused once, before listening, not in every browser."""
    serve = subparsers.add_parser(
        "serve",
        parents=[tui],
        add_help=False,
        help="serve the debugger to web browsers (one app process per browser; no authentication)",
        description="Serve the debugger over HTTP with textual-serve: each browser that opens the page gets its "
        "own app, started with these FILE and flags (the same as `replay-tui tui`). Listens on 127.0.0.1; "
        "there is no authentication, so put it behind a reverse proxy that authenticates.",
    )
    server = serve.add_argument_group("server")
    server.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1, loopback)")
    server.add_argument("--port", type=int, default=8000, help="port to listen on (default 8000)")
    server.add_argument(
        "--public",
        action="store_true",
        help="allow a --host that is not loopback (anyone who can reach the port can use the app)",
    )
    server.add_argument(
        "--public-url",
        metavar="URL",
        help="the address browsers use, when it differs from http://HOST:PORT (behind a reverse proxy: "
        "its https://... address)",
    )
    serve.set_defaults(func=lambda args, out, err: run_serve(args, out, err, tui, check_app))


def run_serve(
    args: argparse.Namespace,
    out: Console,
    err: Console,
    tui: argparse.ArgumentParser,
    check_app: AppCheck,
) -> int:
    check_bind(args.host, args.public)
    if not 0 < args.port < 65536:
        raise UsageError(f"--port {args.port} is not a TCP port (1-65535)")
    try:
        from textual_serve.server import Server
    except ImportError:
        raise UsageError("serve needs textual-serve: pip install 'replay_tui[serve]'") from None
    check_app(args).workspace.demos.close()  # each browser's app opens the files itself
    command = app_command(args, tui)
    public_url = args.public_url or f"http://{_url_host(args.host)}:{args.port}"

    class _Server(Server):
        async def on_startup(self, app: object) -> None:
            # textual-serve's banner prints the command as Rich markup; file names are not markup
            out.print(Text(f"replay-tui serve: {public_url} (one app process per browser; Ctrl+C stops)"))

    _Server(command, host=args.host, port=args.port, title="replay-tui", public_url=public_url).serve()
    return EXIT_OK


def check_bind(host: str, public: bool) -> None:
    """Refuse a ``--host`` that is not loopback unless ``--public``: the server has no authentication."""
    if public or _is_loopback(host):
        return
    raise UsageError(f"--host {host} is not loopback; " + PROXY_HINT.format(host=host))


def _is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name may resolve to anything: only --public binds it


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def app_command(args: argparse.Namespace, tui: argparse.ArgumentParser) -> str:
    """The shell command textual-serve runs per browser: this Python, ``-m replay_tui tui`` and the
    flags, each quoted (textual-serve starts it through ``/bin/sh``; ``exec`` leaves no shell behind)."""
    return "exec " + shlex.join([sys.executable, "-m", "replay_tui", "tui", *app_argv(args, tui)])


def app_argv(args: argparse.Namespace, tui: argparse.ArgumentParser) -> list[str]:
    """The ``tui`` arguments that give the app ``args``: each flag that differs from its default, then
    ``--`` and the files (so a file named like a flag stays a file)."""
    options: list[str] = []
    positionals: list[str] = []
    for action in tui._actions:
        if isinstance(action, argparse._HelpAction) or action.dest in SERVE_FLAGS:
            continue
        value = getattr(args, action.dest, action.default)
        if value == action.default:
            continue
        if not action.option_strings:
            positionals.extend(str(v) for v in value)
            continue
        flag = next((s for s in action.option_strings if s.startswith("--")), action.option_strings[0])
        if isinstance(action, argparse._AppendAction):
            for item in value:
                options += [flag, str(item)]
        elif action.nargs == 0:  # store_true and the like
            options.append(flag)
        elif action.nargs is None:
            options += [flag, str(value)]
        else:  # a new flag kind: say so in the tests rather than drop it
            raise TypeError(f"serve cannot pass on {flag} (nargs={action.nargs!r})")
    return [*options, "--", *positionals] if positionals else options
