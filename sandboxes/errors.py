"""Sandbox exceptions (only for setup problems; a job's own failure is an ExecResult, never an exception)."""


class SandboxUnavailable(RuntimeError):
    """A primitive the backend needs is missing (bubblewrap, seccomp, cgroups, podman, the image)."""
