"""Per-job runner of the container backend: ``docker exec`` runs this as root inside a warm container.

The job spec comes in the environment variable RLVR_SPEC (base64 of a jobcore frame) or, when large, in a
root-only file named by RLVR_SPEC_FILE. The framed result goes to stdout; the child's own output never does.
Arguments: UID HOST_PIDNS.
"""

import base64
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import jobcore  # noqa: E402

OOM_CONTROL = "/sys/fs/cgroup/memory/memory.oom_control"


def main() -> None:
    uid, host_pidns = int(sys.argv[1]), int(sys.argv[2])
    if "RLVR_SPEC_FILE" in os.environ:
        path = os.environ.pop("RLVR_SPEC_FILE")
        with open(path, "rb") as f:
            data = f.read()
        os.unlink(path)
    else:
        data = base64.b64decode(os.environ.pop("RLVR_SPEC"))
    spec = jobcore.decode(data[4:])
    # fast_code=False: the runner's environ block holds podman's defaults (HOME=/root ...); an exec'd python3
    # starts from exactly the job's environment, /proc/self/environ included.
    ctx = jobcore.Context(uid, host_pidns, fast_code=False,
                          oom_control=OOM_CONTROL if os.path.exists(OOM_CONTROL) else None)
    ctx.lock_down()
    try:
        result = jobcore.run_job(spec, ctx)
    except Exception as exc:
        result = {"status": "sandbox_error", "reason": f"runner: {type(exc).__name__}: {exc}", "dirty": True}
    jobcore.send_frame(1, result)


if __name__ == "__main__":
    main()
