"""``replay-tui mcp``: the flags of the Model Context Protocol server and its start.

The server itself lives in :mod:`replay_tui.cli.mcp_server`, imported only when the command runs, so
the ``mcp`` extra is needed only by those who use it.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from replay_tui.cli.common import EXIT_OK, UsageError

COMMAND = "mcp"
LOOPBACK = ("127.0.0.1", "localhost", "::1")
PUBLIC_WARNING = (
    "warning: --public: anyone who reaches {host}:{port} can read every log this server can open, "
    "replay episodes{llm} and write reports under {out_dir}; the server has no authentication and "
    "plain http is readable on the way (put an authenticating https reverse proxy in front)"
)
"""What ``serve --public`` warns of, said of this server (which has no token)."""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        COMMAND,
        help="serve the debugger to coding agents over the Model Context Protocol",
        description="A Model Context Protocol server (stdio by default) whose tools open logs, list and "
        "read episodes and steps, find text, replay, compare runs and export reports. Read-only by "
        "default: reports are written only under --out-dir, runs only to the run history.",
    )
    parser.add_argument("--http", action="store_true", help="serve streamable HTTP instead of stdio")
    parser.add_argument("--host", default="127.0.0.1", help="with --http: the address (loopback unless --public)")
    parser.add_argument("--port", type=int, default=8765, help="with --http: the port (default 8765)")
    parser.add_argument("--public", action="store_true", help="with --http: allow a non-loopback --host")
    parser.add_argument("--out-dir", metavar="DIR", help="the only folder export_report may write into")
    parser.add_argument("--config", metavar="PATH", help="config file whose [match] replay uses (default: the user's)")
    parser.add_argument("--runs-dir", metavar="DIR", help="the run history (default: the user's data folder)")
    parser.add_argument("--allow-llm", action="store_true", help="let replay use the llm mode (spends your key)")
    parser.add_argument(
        "--allow-policy-module",
        action="store_true",
        help="let replay load a policy or graph from a module:attr (runs that code)",
    )
    parser.add_argument("--allow-annotate", action="store_true", help="add the tag_step and note tools")
    parser.add_argument(
        "--max-chars", type=int, default=4000, metavar="N", help="the longest text field a tool returns"
    )
    parser.add_argument("--page-size", type=int, default=50, metavar="N", help="rows per page of a list")
    parser.add_argument("demos", nargs="*", metavar="FILE", help="logs to open at start (as open_logs)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace, out: Console, err: Console) -> int:
    if args.max_chars < 200:
        raise UsageError("--max-chars must be at least 200")
    if args.page_size < 1:
        raise UsageError("--page-size must be at least 1")
    if args.host not in LOOPBACK and not args.public:
        raise UsageError(f"--host {args.host}: not a loopback address; add --public to listen on it")
    out_dir = None
    if args.out_dir is not None:
        out_dir = Path(args.out_dir).expanduser()
        try:
            out_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"--out-dir {args.out_dir}: cannot make it: {exc.strerror or exc}") from None
    from replay_tui.config import ConfigError, load_config

    try:
        matching = load_config(args.config).matching()
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    try:
        from replay_tui.cli.mcp_server import Options, build_server
    except ImportError as exc:  # the extra is not installed
        raise UsageError(f"the mcp command needs the mcp extra: pip install 'replay_tui[mcp]' ({exc})") from None

    options = Options(
        out_dir=out_dir.resolve() if out_dir is not None else None,
        runs_dir=args.runs_dir,
        matching=matching,
        allow_llm=args.allow_llm,
        allow_policy_module=args.allow_policy_module,
        allow_annotate=args.allow_annotate,
        max_chars=args.max_chars,
        page_size=args.page_size,
    )
    server = build_server(options, initial=args.demos)
    if args.http:
        from mcp.server.transport_security import TransportSecuritySettings

        if args.public:
            llm = ", spend the LLM API key (--allow-llm)" if args.allow_llm else ""
            where = str(out_dir) if out_dir is not None else "no folder (no --out-dir)"
            warning = PUBLIC_WARNING.format(host=args.host, port=args.port, llm=llm, out_dir=where)
            err.print(Text(warning), soft_wrap=True)

        hosts = [f"{args.host}:{args.port}", f"{args.host}:*"]
        if args.host in LOOPBACK:
            hosts = [f"{name}:*" for name in ("127.0.0.1", "localhost", "[::1]")]
        security = TransportSecuritySettings(
            enable_dns_rebinding_protection=not args.public,
            allowed_hosts=hosts,
            allowed_origins=[f"http://{host}" for host in hosts],
        )
        server.run("streamable-http", host=args.host, port=args.port, transport_security=security)
    else:
        server.run()
    return EXIT_OK
