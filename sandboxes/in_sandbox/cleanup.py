"""Root-run file handling of the job directory that a job cannot turn against the host or the worker.

Everything walks with directory file descriptors and ``O_NOFOLLOW`` (a symlink is never followed, whatever
the job left behind), iteratively (no recursion, one directory descriptor open at a time, so depth is bounded
by nothing the job controls), and runs only after every process of the job is gone.
"""

from __future__ import annotations

import os
import stat

try:
    from .paths import JOB_DIR, NONCE_FILENAME, SCRATCH_DIRS
except ImportError:
    from paths import JOB_DIR, NONCE_FILENAME, SCRATCH_DIRS

DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
COLLECT_MAX_BYTES = 8 << 20
WIPE_MAX_STEPS = 2_000_000


def wipe_children(top: str) -> bool:
    """Delete everything below ``top`` (not ``top`` itself). True when it ended empty."""
    try:
        fd = os.open(top, DIR_FLAGS)
    except OSError:
        return True
    names: list[str] = []  # the path from top down to fd's directory
    try:
        for _ in range(WIPE_MAX_STEPS):
            sub = _unlink_files_find_dir(fd)
            if sub is not None:
                try:
                    child = os.open(sub, DIR_FLAGS, dir_fd=fd)
                except OSError:
                    return False
                os.close(fd)
                fd = child
                names.append(sub)
                continue
            if not names:
                return True
            parent = os.open("..", DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = parent
            try:
                os.rmdir(names.pop(), dir_fd=fd)
            except OSError:
                return False
        return False
    finally:
        os.close(fd)


def _unlink_files_find_dir(fd: int) -> str | None:
    """Unlink every non-directory entry of ``fd``; return one subdirectory's name, if any."""
    with os.scandir(fd) as entries:
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    return entry.name
                os.unlink(entry.name, dir_fd=fd)
            except FileNotFoundError:
                pass
    return None


def wipe_scratch() -> bool:
    """Empty /tmp and /dev/shm; True when nothing is left."""
    return all([wipe_children(top) for top in SCRATCH_DIRS])


def reset_job_dir() -> None:
    """A fresh, empty, root-owned job directory (handed to the job uid once its files are in)."""
    try:
        os.mkdir(JOB_DIR, 0o755)
    except FileExistsError:
        st = os.lstat(JOB_DIR)
        if not stat.S_ISDIR(st.st_mode) or os.listdir(JOB_DIR):
            raise RuntimeError(f"{JOB_DIR} was not wiped") from None
        os.chown(JOB_DIR, 0, 0, follow_symlinks=False)
        os.chmod(JOB_DIR, 0o755)


def write_job_files(files: list, uid: int, nonce: str | None) -> None:
    """Write the request's files into the (fresh, root-owned) job dir, owned by ``uid``; then hand the dir over."""
    top = os.open(JOB_DIR, DIR_FLAGS)
    try:
        for path, content in files:
            *dirs, name = path.split("/")
            fd = _make_dirs(top, dirs, uid)
            try:
                _write_file(fd, name, content, uid, 0o644)
            finally:
                if fd != top:
                    os.close(fd)
        if nonce is not None:  # root-owned and read-only: the job may read and delete it, not rewrite it
            _write_file(top, NONCE_FILENAME, nonce.encode(), 0, 0o444)
        os.fchown(top, uid, uid)
    finally:
        os.close(top)


def _make_dirs(top: int, dirs: list[str], uid: int) -> int:
    fd = top
    for name in dirs:
        try:
            os.mkdir(name, 0o755, dir_fd=fd)
            created = True
        except FileExistsError:
            created = False
        child = os.open(name, DIR_FLAGS, dir_fd=fd)
        if created:
            os.fchown(child, uid, uid)
        if fd != top:
            os.close(fd)
        fd = child
    return fd


def _write_file(dir_fd: int, name: str, content: bytes, uid: int, mode: int) -> None:
    fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=dir_fd)
    try:
        view = memoryview(content)
        while view:
            view = view[os.write(fd, view) :]
        os.fchown(fd, uid, uid)
        os.fchmod(fd, mode)
    finally:
        os.close(fd)


def collect_files(paths: list[str]) -> dict:
    """Regular files of the job dir, reached without following any symlink, each at most COLLECT_MAX_BYTES."""
    found = {}
    for path in paths:
        data = _read_regular(path.split("/"))
        if data is not None:
            found[path] = data
    return found


def _read_regular(parts: list[str]) -> bytes | None:
    try:
        fd = os.open(JOB_DIR, DIR_FLAGS)
    except OSError:
        return None
    try:
        for name in parts[:-1]:
            child = os.open(name, DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = child
        leaf = os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=fd)
    except OSError:
        os.close(fd)
        return None
    os.close(fd)
    try:
        if not stat.S_ISREG(os.fstat(leaf).st_mode):
            return None
        chunks, left = [], COLLECT_MAX_BYTES
        while left:
            chunk = os.read(leaf, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(leaf)
