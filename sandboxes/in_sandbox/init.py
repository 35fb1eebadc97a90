"""PID 1 of a warm sandbox container: reap every orphan (daemons a job left behind), exit on SIGTERM."""

import os
import signal

signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGCHLD, signal.SIGTERM})
os.chmod("/tmp", 0o1777)
while True:
    try:
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass
    except ChildProcessError:
        pass
    info = signal.sigtimedwait({signal.SIGCHLD, signal.SIGTERM}, 5.0)
    if info is not None and info.si_signo == signal.SIGTERM:
        raise SystemExit(0)
