"""``replay-tui serve``: the debugger in a web browser, through ``textual-serve``.

Each browser that connects gets its own app process, started with the same arguments as
``replay-tui tui`` would be (rebuilt from the parsed flags, quoted with :func:`shlex.join`), plus
``--out-dir``, the one folder its dialogs may write to. The server checks each request's ``Host``,
each WebSocket's ``Origin`` and a per-launch token (:mod:`replay_tui.cli.serve_guard`), and bounds
the app processes (:mod:`replay_tui.cli.serve_server`). It listens on loopback unless ``--public``
says otherwise; the README says how to put it behind an authenticating reverse proxy.
"""

from __future__ import annotations

import argparse
import ipaddress
import os
import re
import secrets
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from rich.console import Console
from rich.text import Text

from replay_tui.cli.common import EXIT_OK, UsageError
from replay_tui.cli.serve_guard import Guard, url_host

if TYPE_CHECKING:
    from replay_tui.tui.app import ReplayApp

AppCheck = Callable[[argparse.Namespace], "ReplayApp"]
"""Builds the app the flags ask for, or raises :class:`UsageError` (``cli.commands.tui_app``)."""

SERVE_FLAGS = ("host", "port", "public", "public_url", "token", "max_sessions")
"""The dests of serve's own flags: everything else is handed to each app process."""
PROXY_HINT = (
    "the server's only authentication is its token: keep it on 127.0.0.1 behind a reverse proxy that "
    "authenticates (nginx or Caddy basic auth, oauth2-proxy), or add --public to bind {host} anyway"
)
TOKEN_ENV = "REPLAY_TUI_SERVE_TOKEN"
"""The environment variable that may hold the token (kept out of ``ps``, unlike ``--token``)."""
TOKEN_PATTERN = re.compile(r"[A-Za-z0-9_-]{16,}")
DEFAULT_OUT_DIR = "replay-tui-out"
"""Where served apps write (relative to the folder serve starts in) when ``--out-dir`` is not given."""
PUBLIC_WARNING = (
    "warning: --public: anyone who reaches {host}:{port} with the token can read every log opened here, "
    "replay episodes, spend the LLM API key (--mode llm) and write exports under {out_dir}; "
    "plain http sends the token in clear (put an https reverse proxy in front)"
)


def register(subparsers: Any, tui: argparse.ArgumentParser, check_app: AppCheck) -> None:
    """Add ``serve``: every flag of ``tui`` (the parser is copied, so the two never drift) and the server's own.

    ``check_app`` builds the app from the flags, raising :class:`UsageError`, so a bad flag or an
    unreadable file is refused once, before listening, not in every browser."""
    serve = subparsers.add_parser(
        "serve",
        parents=[tui],
        add_help=False,
        help="serve the debugger to web browsers (one app process per browser, behind a secret token)",
        description="Serve the debugger over HTTP with textual-serve: each browser that opens the printed URL "
        "(it carries a secret token) gets its own app, started with these FILE and flags (the same as "
        "`replay-tui tui`), writing only under --out-dir. Listens on 127.0.0.1; for a team, put it behind a "
        "reverse proxy that authenticates.",
    )
    server = serve.add_argument_group("server")
    server.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1, loopback)")
    server.add_argument("--port", type=int, default=8000, help="port to listen on (default 8000)")
    server.add_argument(
        "--public",
        action="store_true",
        help="allow a --host that is not loopback (anyone who reaches the port with the token can use the app)",
    )
    server.add_argument(
        "--public-url",
        metavar="URL",
        help="the address browsers use, when it differs from http://HOST:PORT (behind a reverse proxy: "
        "its https://... address)",
    )
    server.add_argument(
        "--token",
        help=f"the secret the URL must carry (default: ${TOKEN_ENV}, else a new random one each start; "
        "at least 16 of A-Z a-z 0-9 _ -)",
    )
    server.add_argument(
        "--max-sessions",
        type=int,
        default=4,
        metavar="N",
        help="at most N browsers (app processes) at once (default 4)",
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
    if args.max_sessions < 1:
        raise UsageError(f"--max-sessions {args.max_sessions} must be at least 1")
    if args.public_url is None and _is_unspecified(args.host):
        raise UsageError(
            f"--host {args.host} listens on every address: give --public-url with the address browsers use "
            "(requests must name it in their Host header)"
        )
    token = launch_token(args.token)
    public_url = check_public_url(args.public_url or f"http://{url_host(args.host)}:{args.port}")
    try:
        from replay_tui.cli.serve_server import GuardedServer
    except ImportError:
        raise UsageError("serve needs textual-serve: pip install 'replay_tui[serve]'") from None
    args.out_dir = str(Path(args.out_dir or DEFAULT_OUT_DIR).expanduser().resolve())
    check_app(args).workspace.demos.close()  # each browser's app opens the files itself (check_app makes out_dir)
    command = app_command(args, tui)
    guard = Guard.build(args.host, args.port, public_url, token)
    if args.public:
        err.print(Text(PUBLIC_WARNING.format(host=args.host, port=args.port, out_dir=args.out_dir)), soft_wrap=True)

    def listening() -> None:  # the URL with its token, printed once
        out.print(Text(f"replay-tui serve: open {public_url}/?token={token}"), soft_wrap=True)
        limits = f"one app process per browser, at most {args.max_sessions}; exports go under {args.out_dir}"
        out.print(Text(f"({limits}; Ctrl+C stops)"), soft_wrap=True)

    GuardedServer(
        command,
        host=args.host,
        port=args.port,
        public_url=public_url,
        guard=guard,
        max_sessions=args.max_sessions,
        on_listening=listening,
    ).serve()
    return EXIT_OK


def launch_token(given: str | None) -> str:
    """The token of this launch: ``--token``, else ``$REPLAY_TUI_SERVE_TOKEN``, else a new random one."""
    token = given if given is not None else os.environ.get(TOKEN_ENV)
    if token is None:
        return secrets.token_urlsafe(32)
    if not TOKEN_PATTERN.fullmatch(token):
        source = "--token" if given is not None else f"${TOKEN_ENV}"
        raise UsageError(f"{source} must be at least 16 characters of A-Z a-z 0-9 _ -")
    return token


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


def check_public_url(url: str) -> str:
    """``--public-url`` without a trailing slash, or :class:`UsageError` unless it is an http(s) URL
    with a host (its host and origin are the ones the server accepts)."""
    try:
        split = urlsplit(url)
        split.port  # noqa: B018 (raises ValueError on a port that is not a number in range)
    except ValueError as exc:
        raise UsageError(f"--public-url {url}: {exc}") from None
    if split.scheme not in ("http", "https") or not split.hostname:
        raise UsageError(f"--public-url {url}: not an http:// or https:// URL with a host")
    return url.rstrip("/")


def _is_unspecified(host: str) -> bool:
    return host.strip("[]") in ("0.0.0.0", "::", "")


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
