"""Warm worker: the trusted side inside one sandbox slot (bubblewrap, or a container); one job at a time.

``/usr/bin/python3 -I -S worker.py UID_BASE HOST_PIDNS [OPTIONS_JSON]``. Protocol on fd 0 / fd 1, framed
(framing.send_frame): the supervisor sends a hello, the worker answers ``{"ready": true}``, then each job spec
is answered by its result; EOF ends the worker. OPTIONS_JSON (all default true; the benchmark turns them off
one at a time to price them): ``hidepid`` (/proc shows a job only its own processes), ``seccomp``,
``fast_code`` (run ``code`` in the template's warm interpreter instead of exec'ing python3).

The worker starts with CAP_SYS_ADMIN and CAP_SETPCAP only to remount /proc; it drops both (bounding set
included) before it reads its first frame. It never forks a job itself: jobs come from a template process
(zygote.py) exec'd fresh, so nothing the worker has read (earlier requests) is in a job's memory.
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import framing  # noqa: E402
import job_lifecycle  # noqa: E402
import privileges  # noqa: E402
from paths import SCRATCH_DIRS  # noqa: E402


def main() -> None:
    uid_base, host_pidns = int(sys.argv[1]), int(sys.argv[2])
    options = {"hidepid": True, "seccomp": True, "fast_code": True}
    options.update(json.loads(sys.argv[3]) if len(sys.argv) > 3 else {})
    if options["hidepid"]:
        privileges.hide_other_processes()
    privileges.drop_capabilities(privileges.CAP_SYS_ADMIN, privileges.CAP_SETPCAP)
    for scratch in SCRATCH_DIRS:
        if os.path.isdir(scratch):
            os.chmod(scratch, 0o1777)
    ctx = job_lifecycle.Context(uid_base, host_pidns, fast_code=options["fast_code"], seccomp=options["seccomp"])
    ctx.template(None).prefork()  # started before any request arrives; the slot is clean
    framing.recv_frame(0)
    framing.send_frame(1, {"ready": True})
    while True:
        try:
            spec = framing.recv_frame(0)
        except EOFError:
            return
        try:
            result = job_lifecycle.run_job(spec, ctx)
        except Exception as exc:  # report, and let the supervisor recycle this worker
            result = {"status": "sandbox_error", "reason": f"worker: {type(exc).__name__}: {exc}", "dirty": True}
        framing.send_frame(1, result)


if __name__ == "__main__":
    main()
