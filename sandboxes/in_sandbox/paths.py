"""Fixed places inside every sandbox (bubblewrap root or container), shared by the trusted and the host side."""

JOB_DIR = "/tmp/job"
SCRATCH_DIRS = ("/tmp", "/var/tmp", "/dev/shm")  # every place a job can write; wiped after each job
NONCE_FILENAME = ".rlvr_nonce"
PATH = "/usr/local/bin:/usr/bin:/bin"
# Control files of the slot's per-job cgroups, bound in by the backend as CGROUP_DIR/<controller>/<file>.
CGROUP_DIR = "/run/rlvr-cg"
CGROUP_FILES = {
    "memory": ("tasks", "memory.limit_in_bytes", "memory.memsw.limit_in_bytes", "memory.oom_control"),
    "pids": ("tasks", "pids.max"),
    "cpu": ("tasks", "cpu.shares"),
    "cpuacct": ("tasks", "cpuacct.usage"),
    "freezer": ("tasks", "cgroup.procs", "freezer.state"),
}
