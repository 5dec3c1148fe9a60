"""Issue 27 item 4: hermes-context is not on a package index, so every install line that names
an extra must install from source (``pip install '/path/to/hermes-context[postgres]'``); the
index form (``pip install 'hermes-context[postgres]'``) fails for every reader who copies it."""

from __future__ import annotations

import re
from pathlib import Path

from hermes_core.plugins.loading import SOURCE_PLACEHOLDER, own_install_line

ROOT = Path(__file__).resolve().parents[1]
#: ``pip install [-e] [--force-reinstall] 'hermes-context[...]'`` or ``hermes-context[...]``
#: right after ``pip install``: the name alone, resolved against an index
INDEX_FORM = re.compile(r"pip install\s+(?:-\S+\s+)*['\"]?hermes[-_]context(?:\[|['\"\s]|$)")
#: the bare extra spelled as a thing to install, without a path before it
BARE_EXTRA = re.compile(r"(?<![/\w.-])hermes[-_]context\[")


def _texts() -> list[Path]:
    files = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    for folder in ("hermes_core", "hermes_plugins", "examples"):
        files += sorted((ROOT / folder).rglob("*.py")) + sorted((ROOT / folder).rglob("*.md"))
    return files


def test_no_install_line_names_the_package_from_an_index() -> None:
    found = []
    for path in _texts():
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if INDEX_FORM.search(line) or BARE_EXTRA.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not found, "install from source ('/path/to/hermes-context[extra]'):\n" + "\n".join(found)


def test_the_hint_in_code_installs_from_source() -> None:
    line = own_install_line("postgres")
    assert not INDEX_FORM.search(line) and not BARE_EXTRA.search(line), line
    assert line.startswith("pip install '/") and line.endswith("[postgres]'")
    # run from a checkout, the hint names it (the line works as printed); from an installed
    # wheel (as under tox) it names the placeholder the docs use
    assert line in (
        f"pip install '{ROOT.as_posix()}[postgres]'",
        f"pip install '{SOURCE_PLACEHOLDER}[postgres]'",
    )
