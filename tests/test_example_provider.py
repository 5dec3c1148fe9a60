"""The third-party example provider (examples/keyword-memory-provider), installed from its own
pyproject, is found through its entry point and passes the conformance suite."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from hermes_core.testing import make_host

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "keyword-memory-provider"

if importlib.util.find_spec("hermes_keyword_memory") is None:
    if os.environ.get("HERMES_EXAMPLE_PROVIDER_REQUIRED"):
        raise RuntimeError("tox installs examples/keyword-memory-provider; it is missing")
    pytest.skip(
        "pip install --no-deps ./examples/keyword-memory-provider to run", allow_module_level=True
    )


def test_the_example_is_selected_by_config(tmp_path: Path) -> None:
    with make_host(tmp_path, {"memory": {"provider": "keyword_memory"}}, builtins=None) as host:
        record = host.plugins.records["keyword_memory"]
        assert record.status == "active" and record.external_provider
        assert record.distribution == "hermes-keyword-memory"


def test_the_examples_own_tests_pass_with_the_conformance_suite(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(EXAMPLE / "tests")],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    passed = re.search(r"(\d+) passed", proc.stdout)
    assert passed and int(passed.group(1)) >= 30 and "failed" not in proc.stdout
