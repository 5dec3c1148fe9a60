"""The entry-point scan runs only when it can matter (issue 27 item 12).

Scanning the ``hermes_context.plugins`` group imports :mod:`importlib.metadata` and reads
every installed distribution's metadata; a host whose settings name only built-ins cannot
use its answer, so it never pays for it. A setting that names a third-party plugin still
finds it. Each probe runs in a fresh interpreter: ``sys.modules`` shows whether it scanned.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from fake_distribution import PLUGIN_MODULE, install_fake_distribution

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "tests" / "data" / "transcripts" / "coding-50turns.json"

HOST = """
import json, sys
from hermes_core import Hermes, load_config
host = Hermes(load_config(home=sys.argv[1]))
records = {{n: r.status for n, r in host.plugins.records.items()}}
{extra}
print(json.dumps([records, "importlib.metadata" in sys.modules]))
"""

CLI = """
import json, sys
from hermes_core.cli import main
code = main(["compress", {sample!r}, "--out", {out!r}])
print(json.dumps([code, "importlib.metadata" in sys.modules]))
"""

ONE_SHOT = """
import json, sys
import hermes_core as hc
messages = json.load(open({sample!r}, encoding="utf-8"))
result = hc.compress(messages, context_length=128_000, summarizer="fallback", force=True)
print(json.dumps([result.status, "importlib.metadata" in sys.modules]))
"""


def _probe(code: str, home: Path, *args: str, path: Path | None = None) -> list[object]:
    pythonpath = os.pathsep.join([str(path), str(ROOT)] if path else [str(ROOT)])
    env = {**os.environ, "HERMES_HOME": str(home), "PYTHONPATH": pythonpath}
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=home,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result: list[object] = json.loads(done.stdout.splitlines()[-1])
    return result


def test_default_host_does_not_scan(tmp_path: Path) -> None:
    records, scanned = _probe(HOST.format(extra=""), tmp_path, str(tmp_path))
    assert isinstance(records, dict) and records["compressor"] == "active"
    assert scanned is False


def test_built_in_names_alone_do_not_scan(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text(
        "plugins:\n  disabled: [threat_scanner]\n", encoding="utf-8"
    )
    records, scanned = _probe(HOST.format(extra=""), tmp_path, str(tmp_path))
    assert isinstance(records, dict) and records["threat_scanner"] == "disabled"
    assert scanned is False


def test_compress_does_not_scan(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    code, scanned = _probe(CLI.format(sample=str(SAMPLE), out=str(out)), tmp_path)
    assert code in (0, 3)
    assert scanned is False
    _status, scanned = _probe(ONE_SHOT.format(sample=str(SAMPLE)), tmp_path)
    assert scanned is False


def test_a_named_third_party_plugin_is_still_found(tmp_path: Path) -> None:
    site = tmp_path / "site"
    install_fake_distribution(
        site,
        "hermes_thirdparty",
        {"recall": "thirdparty_plugin:Recall"},
        {"thirdparty_plugin": PLUGIN_MODULE},
    )
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text("plugins:\n  enabled: [recall]\n", encoding="utf-8")
    records, scanned = _probe(HOST.format(extra=""), home, str(home), path=site)
    assert isinstance(records, dict) and records["recall"] == "active"
    assert scanned is True


def test_a_misspelled_name_is_still_refused(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text("plugins:\n  enabled: [file_memroy]\n", "utf-8")
    code = HOST.format(extra="").replace(
        "host = Hermes(load_config(home=sys.argv[1]))",
        "try:\n    Hermes(load_config(home=sys.argv[1]))\nexcept Exception as exc:\n"
        "    print(json.dumps([str(exc), True])); sys.exit(0)",
    )
    message, _ = _probe(code, tmp_path, str(tmp_path))
    assert "file_memroy" in str(message) and "file_memory" in str(message)


MEMORY = """
import json, sys
{code}
prefixes = ("hermes_core.memory.", "hermes_core.provenance")
heavy = sorted(m for m in sys.modules if m.startswith(prefixes))
print(json.dumps([heavy, True]))
"""


def test_compress_never_loads_the_memory_store(tmp_path: Path) -> None:
    """The default ``file_memory`` plugin and ``hermes_core.memory`` load the store, its
    audit trail and provenance on first use: ``compress`` never writes memory."""
    out = tmp_path / "out.json"
    cli = "from hermes_core.cli import main\nmain(['compress', {s!r}, '--out', {o!r}])"
    heavy, _ = _probe(MEMORY.format(code=cli.format(s=str(SAMPLE), o=str(out))), tmp_path)
    assert isinstance(heavy, list)
    assert not [
        m for m in heavy if m.startswith(("hermes_core.memory.store", "hermes_core.provenance"))
    ]
    assert json.loads(out.read_text(encoding="utf-8"))


def test_memory_names_still_load_on_use(tmp_path: Path) -> None:
    code = (
        "import hermes_core as hc\nfrom hermes_core.memory import MemoryStore, parse_entries\n"
        "assert hc.memory.MemoryStore is MemoryStore and callable(parse_entries)"
    )
    heavy, _ = _probe(MEMORY.format(code=code), tmp_path)
    assert "hermes_core.memory.store" in heavy
