"""Guards for tests that write where a device lives."""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator


@contextlib.contextmanager
def dev_null_kept() -> Iterator[os.stat_result]:
    """Yield the stat of /dev/null; afterwards fail unless it is the same character device.

    Should the code under test regress and replace it with a regular file (as root it can),
    the device is put back first (``mknod``, then a rename over the file), so one failing
    test cannot break every later ``> /dev/null`` on the machine."""
    before = os.lstat(os.devnull)
    try:
        yield before
    finally:
        after = os.lstat(os.devnull)
        same = (after.st_ino, after.st_mode, after.st_rdev) == (
            before.st_ino,
            before.st_mode,
            before.st_rdev,
        )
        if not stat.S_ISCHR(after.st_mode) and stat.S_ISCHR(before.st_mode):
            spare = os.devnull + ".restore"
            os.mknod(spare, 0o666 | stat.S_IFCHR, before.st_rdev)
            os.chmod(spare, 0o666)
            os.replace(spare, os.devnull)
        assert same, "/dev/null was replaced (and has been put back)"
