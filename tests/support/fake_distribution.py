"""A third-party plugin package "installed" into a folder the tests put on ``sys.path``: a real
dist-info with its entry points, as pip would leave it, so the real entry-point lookup finds it."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from pathlib import Path


def install_fake_distribution(
    root: Path, dist: str, entry_points: Mapping[str, str], modules: Mapping[str, str]
) -> None:
    info = root / f"{dist}-1.2.3.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.2.3\n")
    lines = ["[hermes_context.plugins]", *(f"{k} = {v}" for k, v in entry_points.items())]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n")
    for name, source in modules.items():
        (root / f"{name}.py").write_text(textwrap.dedent(source))


PLUGIN_MODULE = """
from hermes_core import hookimpl

class Recall:
    def __init__(self, context):
        self.context = context

    @hookimpl
    def memory_prefetch(self, query):
        return f"{self.context.name}:{self.context.config.get('greeting')}:{query}"

class External(Recall):
    external_memory_provider = True
"""
