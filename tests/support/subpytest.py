"""Run a real pytest in a folder of throw-away files (a docs example, a plugin's own tests),
as an outsider would, with the repository importable."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_pytest(folder: Path) -> subprocess.CompletedProcess[str]:
    """``python -m pytest -q`` in ``folder``; the completed process (never raises)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(folder), str(ROOT)])}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(folder)],
        capture_output=True,
        text=True,
        env=env,
        cwd=folder,
        check=False,
    )
