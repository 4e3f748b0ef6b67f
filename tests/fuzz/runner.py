"""Run one command on one input in a forked child: its exit code, stderr, wall time and peak RSS.

Forking from a parent that has imported the CLI costs milliseconds (a fresh interpreter costs
about half a second), and ``os.wait4`` reports the child's own peak RSS. The child's address
space is capped so a runaway input cannot take the machine down while fuzzing.
"""

from __future__ import annotations

import os
import resource
import signal
import tempfile
import time
from dataclasses import dataclass
from typing import List


@dataclass
class Outcome:
    code: int  # exit code; -N for death by signal N (-14: SIGALRM, the time limit)
    stderr: str
    stdout_bytes: int
    seconds: float
    rss_mb: float


def warm_up(manifest: str) -> None:
    """Run explain and upgrade once in this process, so forked children start with the modules
    imported and the pod schema built (as a second run of a long-lived process would)."""
    import contextlib
    import io

    from kubectl_dynamo.cli import main

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        for argv in (["explain", "dgd", "-f", manifest], ["upgrade", "dgd", "-f", manifest]):
            main(argv)


def run_forked(argv: List[str], stdin_data: bytes, *, time_limit: float = 20.0, memory_mb: int = 2048) -> Outcome:
    from kubectl_dynamo.cli import main

    with tempfile.TemporaryFile() as fin, tempfile.TemporaryFile() as fout, tempfile.TemporaryFile() as ferr:
        fin.write(stdin_data)
        fin.seek(0)
        start = time.monotonic()
        pid = os.fork()
        if pid == 0:  # the child: never returns
            code = 70
            try:
                os.dup2(fin.fileno(), 0)
                os.dup2(fout.fileno(), 1)
                os.dup2(ferr.fileno(), 2)
                resource.setrlimit(resource.RLIMIT_AS, (memory_mb * 2**20, memory_mb * 2**20))
                signal.setitimer(signal.ITIMER_REAL, time_limit)  # SIGALRM's default action ends the child
                signal.signal(signal.SIGALRM, signal.SIG_DFL)
                import sys

                # the child ends with os._exit: these streams live as long as it does
                sys.stdin = open(0, closefd=False)
                sys.stdout = open(1, "w", closefd=False)
                sys.stderr = open(2, "w", closefd=False)
                code = main(argv)
                sys.stdout.flush()
                sys.stderr.flush()
            finally:
                os._exit(code)
        _, status, usage = os.wait4(pid, 0)
        seconds = time.monotonic() - start
        code = os.waitstatus_to_exitcode(status)
        ferr.seek(0)
        fout.seek(0, os.SEEK_END)
        return Outcome(code, ferr.read().decode("utf-8", "replace"), fout.tell(), seconds, usage.ru_maxrss / 1024)
