"""One-shot runner of the container backend (``persistent=False``): ``docker exec`` runs this per job, as root.

The job spec comes in the environment variable RLVR_SPEC (base64 of a frame) or, when large, in a root-only
file named by RLVR_SPEC_FILE. The framed result goes to stdout; the child's own output never does.
Arguments: UID_BASE HOST_PIDNS. The template process is started before the spec is read.
"""

import base64
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import framing  # noqa: E402
import job_lifecycle  # noqa: E402
import privileges  # noqa: E402


def main() -> None:
    uid_base, host_pidns = int(sys.argv[1]), int(sys.argv[2])
    privileges.hide_other_processes()  # the container's /proc: idempotent, whichever runner comes first
    privileges.drop_capabilities(privileges.CAP_SYS_ADMIN, privileges.CAP_SETPCAP)
    ctx = job_lifecycle.Context(uid_base, host_pidns)
    ctx.template(None)
    if "RLVR_SPEC_FILE" in os.environ:
        path = os.environ.pop("RLVR_SPEC_FILE")
        with open(path, "rb") as f:
            data = f.read()
        os.unlink(path)
    else:
        data = base64.b64decode(os.environ.pop("RLVR_SPEC"))
    spec = framing.decode(data[4:])
    try:
        result = job_lifecycle.run_job(spec, ctx)
    except Exception as exc:
        result = {"status": "sandbox_error", "reason": f"runner: {type(exc).__name__}: {exc}", "dirty": True}
    framing.send_frame(1, result)


if __name__ == "__main__":
    main()
