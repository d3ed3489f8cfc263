"""Commands run in a process of their own without paying the interpreter's start and imports each time.

A subprocess of ``python -m replay_tui`` spends ~0.8 s of CPU importing the package before the command
does anything. The hostile-input tests need what a process gives (a memory cap by ``RLIMIT_AS``, a hang
that is killed at a timeout, a working folder, an environment, an exit code, stdout and stderr apart
from the test's), not a fresh interpreter: here each command runs in a child forked from
multiprocessing's fork server, which imported the CLI once per test worker. The fork server is a
single-threaded process, so forking it is safe (forking the pytest worker, with its threads, is not).
Tests about the interpreter itself (``python -m replay_tui`` as a shell runs it) keep a real subprocess.
"""

from __future__ import annotations

import atexit
import io
import multiprocessing
import multiprocessing.forkserver
import os
import resource
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path

PRELOAD = ["replay_tui.cli.commands", "replay_tui.sources", "tests.forked"]
"""What the fork server imports once: the CLI and the loader (each command's lazy imports still run)."""

_context = multiprocessing.get_context("forkserver")
_context.set_forkserver_preload(PRELOAD)
# Stopped (and reaped) when the worker exits, so the server's CPU and its children's count in the worker's.
atexit.register(multiprocessing.forkserver._forkserver._stop)  # type: ignore[attr-defined]


def cli_main(*argv: str) -> int:
    """``replay-tui ARGV``, as ``python -m replay_tui`` runs it."""
    from replay_tui.cli import main

    return main(list(argv))


def load_problems(path: str, allow_pickle: str) -> int:
    """Every episode of the log at ``path`` loaded and validated: its problems one a line, then ``usable N``
    (the episodes without a problem). ``allow_pickle`` is ``"1"`` for ``--allow-pickle``."""
    from replay_tui.sources import open_sources

    demos = open_sources(path, allow_pickle=allow_pickle == "1")
    demos.validate_all()
    for problem in demos.problems:
        print(problem.one_line())
    print("usable", sum(demos.problem_for(sid) is None for sid in demos.session_ids))
    return 0


def cache_writer(folder: str, worker: str, count: str) -> int:
    """``count`` responses of worker ``worker`` and ``count`` shared ones written into the LLM response cache
    in ``folder`` (``tests/llm/test_cache.py`` runs several at once, each a process of its own)."""
    from replay_tui.policies.cache import request_key
    from replay_tui.policies.llm_cache import ResponseCache

    cache = ResponseCache(folder)
    who, many = int(worker), int(count)
    for n in range(many):
        cache.put(request_key({"worker": who, "n": n}), {"outcome": "response", "response": {"w": who, "n": n}})
        cache.put(request_key({"shared": n}), {"outcome": "response", "response": {"n": n}})
        if n % 50 == 0:
            cache.get(request_key({"worker": 0, "n": n}))
    cache.close()
    return 0


def _own_start() -> None:
    """The process's own start where the package keeps it (``fileio.PROCESS_START``, the cutoff for
    leftover temporary files): imported in the fork server, it would be the server's start."""
    fileio = sys.modules.get("replay_tui.fileio")
    if fileio is not None:
        fileio.PROCESS_START = fileio._process_start()
        render = sys.modules.get("replay_tui.visual.render")
        if render is not None:
            render.PROCESS_START = fileio.PROCESS_START  # type: ignore[attr-defined]


def _child(
    target: Callable[..., int | None],
    args: tuple[str, ...],
    cwd: str,
    env: dict[str, str],
    memory: int | None,
    out: str,
    err: str,
) -> None:
    """In the forked child: the process's limits, folder, environment and standard streams, then the
    target; its return value (or SystemExit's code) is the exit code, an uncaught exception a traceback
    and exit 1, as the interpreter would."""
    if memory is not None:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    _own_start()
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    time.tzset()  # TZ as a fresh process reads it
    tempfile.tempdir = None  # TMPDIR too
    for fd, path, flags in ((0, os.devnull, os.O_RDONLY), (1, out, os.O_WRONLY), (2, err, os.O_WRONLY)):
        opened = os.open(path, flags)
        os.dup2(opened, fd)
        os.close(opened)
    code: object = 0
    try:
        code = target(*args)
    except SystemExit as exc:
        code = exc.code
    except BaseException:
        traceback.print_exc()
        code = 1
    if code is None:
        code = 0
    elif not isinstance(code, int):
        print(code, file=sys.stderr)
        code = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


def _text(data: bytes) -> str:
    """Bytes decoded as ``subprocess.run(text=True)`` decodes them (locale encoding, universal newlines)."""
    return io.TextIOWrapper(io.BytesIO(data)).read()


class Started:
    """A forked command under way (:func:`start`): its process and the files its streams go to."""

    def __init__(self, process: multiprocessing.process.BaseProcess, streams: tempfile.TemporaryDirectory[str]) -> None:
        self.process = process
        self._streams = streams
        self.out = Path(streams.name, "out")
        self.err = Path(streams.name, "err")

    def wait_for_output(self, text: str, timeout: float) -> bool:
        """Whether ``text`` is in its standard output before it ends or ``timeout`` seconds pass (polled)."""
        deadline = time.monotonic() + timeout
        while text not in self.out.read_text(errors="replace"):
            if not self.process.is_alive() or time.monotonic() > deadline:
                return text in self.out.read_text(errors="replace")
            time.sleep(0.005)
        return True

    def kill(self) -> int | None:
        """SIGKILL, then its exit code (``-9``) once it is reaped."""
        self.process.kill()
        self.process.join()
        return self.process.exitcode

    def close(self) -> None:
        """Forget its streams' files (after the process has ended)."""
        self._streams.cleanup()


def start(
    target: Callable[..., int | None], *args: str, cwd: Path, env: dict[str, str], memory: int | None = None
) -> Started:
    """``target(*args)`` started in a forked child with exactly ``env``, in ``cwd``, under an address-space
    cap of ``memory`` bytes; the caller waits for it, kills it and closes it."""
    streams = tempfile.TemporaryDirectory(prefix="forked-")
    out, err = Path(streams.name, "out"), Path(streams.name, "err")
    out.touch()
    err.touch()
    child = _context.Process(target=_child, args=(target, args, str(cwd), env, memory, str(out), str(err)))
    child.start()
    return Started(child, streams)


def run(
    target: Callable[..., int | None],
    *args: str,
    cwd: Path,
    env: dict[str, str],
    timeout: float,
    memory: int | None = None,
    argv: Sequence[str] = (),
) -> subprocess.CompletedProcess[str]:
    """``target(*args)`` in a forked child with exactly ``env``, in ``cwd``, under an address-space cap
    of ``memory`` bytes; killed (and ``subprocess.TimeoutExpired`` raised) after ``timeout`` seconds.
    ``argv`` only names the command in the result."""
    started = start(target, *args, cwd=cwd, env=env, memory=memory)
    try:
        started.process.join(timeout)
        if started.process.exitcode is None:
            started.kill()
            raise subprocess.TimeoutExpired(list(argv) or [str(target), *args], timeout)
        code = started.process.exitcode
        out, err = _text(started.out.read_bytes()), _text(started.err.read_bytes())
        return subprocess.CompletedProcess(list(argv), code, out, err)
    finally:
        started.close()
