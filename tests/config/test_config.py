"""Config loading: defaults, strict validation with file and line, env overrides, secrets."""

from __future__ import annotations

import dataclasses
import os
import re
from pathlib import Path

import pytest
from scaling import work

from hermes_core.config.loader import Source, load_config, resolve_home
from hermes_core.config.settings import Settings
from hermes_core.errors import ConfigError


def write(tmp_path: Path, text: str, name: str = "config.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults_follow_the_seed(tmp_path: Path) -> None:
    s = load_config(None, home=tmp_path, environ={}).settings
    c = s.compression
    assert (c.enabled, c.threshold, c.target_ratio) == (True, 0.50, 0.20)
    assert (c.protect_first_n, c.protect_last_n, c.min_tail_user_messages) == (3, 20, 1)
    assert (c.max_attempts, c.in_place, c.abort_on_summary_failure) == (3, True, False)
    assert c.threshold_tokens is None and c.model_thresholds == {}
    assert (c.proactive_prune_tokens, c.proactive_prune_min_result_chars) == (0, 8000)
    assert c.proactive_prune_min_reclaim_tokens == 4096
    assert (c.progress_notices, c.idle_compact_after_seconds, c.micro_compact) == (False, 0, False)
    m = s.memory
    assert (m.memory_enabled, m.user_profile_enabled) == (True, True)
    assert (m.memory_char_limit, m.user_char_limit) == (2200, 1375)
    assert (m.nudge_interval, m.flush_min_turns, m.provider) == (10, 6, "")
    assert m.prefetch_timeout == 8.0 and m.write_approval == "allow"
    assert s.skills.creation_nudge_interval == 15
    assert s.model.tokenizer == "auto"
    assert s.plugins.strict is False


def test_every_setting_is_documented() -> None:
    def walk(obj: object) -> list[str]:
        missing = []
        for f in dataclasses.fields(obj):  # type: ignore[arg-type]
            value = getattr(obj, f.name)
            if dataclasses.is_dataclass(value):
                missing += walk(value)
            elif not f.metadata.get("doc"):
                missing.append(f.name)
        return missing

    assert walk(Settings()) == []


def test_file_values_and_provenance_with_line(tmp_path: Path) -> None:
    path = write(tmp_path, "model:\n  name: gpt-4o\ncompression:\n  threshold: 0.6\n")
    loaded = load_config(path, home=tmp_path, environ={})
    assert loaded.settings.compression.threshold == 0.6
    assert loaded.settings.model.name == "gpt-4o"
    assert loaded.source_of("compression.threshold") == Source("file", f"{path}:4")
    assert loaded.source_of("compression.enabled") == Source("default")


def test_home_config_is_optional_and_read_when_present(tmp_path: Path) -> None:
    assert load_config(None, home=tmp_path, environ={}).path is None
    write(tmp_path, "memory:\n  nudge_interval: 3\n")
    loaded = load_config(None, home=tmp_path, environ={})
    assert loaded.settings.memory.nudge_interval == 3
    assert loaded.path == tmp_path / "config.yaml"


def test_unknown_key_names_key_file_line_and_suggests(tmp_path: Path) -> None:
    path = write(tmp_path, "compression:\n  enabled: true\n  treshold: 0.6\n")
    with pytest.raises(ConfigError) as err:
        load_config(path, home=tmp_path, environ={})
    message = str(err.value)
    assert f"{path}:3: compression.treshold: unknown key (did you mean 'threshold'?)" in message


def test_unknown_section(tmp_path: Path) -> None:
    path = write(tmp_path, "compresion:\n  enabled: true\n")
    with pytest.raises(ConfigError, match=r"config.yaml:1: compresion: unknown key \(did you"):
        load_config(path, home=tmp_path, environ={})


@pytest.mark.parametrize(
    ("yaml_text", "expected"),
    [
        ("compression:\n  threshold: high\n", "compression.threshold: must be a number"),
        ("compression:\n  enabled: 'yes'\n", "compression.enabled: must be true or false"),
        ("compression:\n  protect_first_n: 2.5\n", "must be a whole number"),
        ("compression:\n  protect_first_n: true\n", "must be a whole number, not true"),
        ("compression:\n  max_attempts: 11\n", "must be at most 10"),
        ("compression:\n  threshold: 0\n", "must be at least 0.05"),
        ("model:\n  tokenizer: fast\n", "must be one of auto, tiktoken, estimate"),
        ("memory:\n  write_approval: maybe\n", "must be one of allow, stage, block"),
        ("plugins:\n  enabled: mem0\n", "must be a list of names"),
        ("compression: 3\n", "compression: must be a mapping of settings"),
        ("model:\n  name: 4\n", "must be a string; quote it"),
        ("compression:\n  model_thresholds:\n    glm: lots\n", "model_thresholds.glm"),
    ],
)
def test_wrong_types_are_errors(tmp_path: Path, yaml_text: str, expected: str) -> None:
    path = write(tmp_path, yaml_text)
    with pytest.raises(ConfigError) as err:
        load_config(path, home=tmp_path, environ={})
    assert expected in str(err.value)
    assert f"{path}:" in str(err.value)


def test_all_problems_reported_at_once(tmp_path: Path) -> None:
    path = write(tmp_path, "compression:\n  treshold: 1\n  enabled: 2\nmemory:\n  x: 1\n")
    with pytest.raises(ConfigError) as err:
        load_config(path, home=tmp_path, environ={})
    assert "(3 problems)" in str(err.value)


def test_numeric_strings_are_coerced(tmp_path: Path) -> None:
    path = write(tmp_path, "memory:\n  memory_char_limit: '4000'\n  user_char_limit: '2_000'\n")
    s = load_config(path, home=tmp_path, environ={}).settings
    assert (s.memory.memory_char_limit, s.memory.user_char_limit) == (4000, 2000)


def test_yaml_syntax_error_has_line_and_column(tmp_path: Path) -> None:
    path = write(tmp_path, "compression:\n  enabled: [true\n")
    with pytest.raises(ConfigError, match=r"config.yaml:\d+:\d+: invalid YAML"):
        load_config(path, home=tmp_path, environ={})


def test_duplicate_keys_are_errors(tmp_path: Path) -> None:
    path = write(tmp_path, "compression:\n  threshold: 0.5\n  threshold: 0.6\n")
    with pytest.raises(ConfigError, match="duplicate key"):
        load_config(path, home=tmp_path, environ={})


def test_yaml_is_loaded_safely(tmp_path: Path) -> None:
    path = write(tmp_path, "model:\n  name: !!python/object/apply:os.system ['true']\n")
    with pytest.raises(ConfigError, match="invalid YAML"):
        load_config(path, home=tmp_path, environ={})


def test_top_level_must_be_mapping(tmp_path: Path) -> None:
    path = write(tmp_path, "- a\n- b\n")
    with pytest.raises(ConfigError, match="must be a mapping"):
        load_config(path, home=tmp_path, environ={})


def test_explicit_missing_file_directory_and_bad_encoding(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="config file not found"):
        load_config(tmp_path / "nope.yaml", home=tmp_path, environ={})
    with pytest.raises(ConfigError, match="is a directory"):
        load_config(tmp_path, home=tmp_path, environ={})
    bad = tmp_path / "bad.yaml"
    bad.write_bytes(b"model:\n  name: \xff\xfe\n")
    with pytest.raises(ConfigError, match="not UTF-8"):
        load_config(bad, home=tmp_path, environ={})


def test_bom_and_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_bytes(b"\xef\xbb\xbfmodel:\n  name: x\n")
    assert load_config(path, home=tmp_path, environ={}).settings.model.name == "x"
    write(tmp_path, "", "empty.yaml")
    assert load_config(tmp_path / "empty.yaml", home=tmp_path, environ={}).settings == Settings()


def test_environment_overrides_file_with_provenance(tmp_path: Path) -> None:
    path = write(tmp_path, "compression:\n  threshold: 0.6\n")
    env = {
        "HERMES__COMPRESSION__THRESHOLD": "0.7",
        "HERMES__AUXILIARY__COMPRESSION__MODEL": "small",
        "HERMES__PLUGINS__DISABLED": "[a, b]",
    }
    loaded = load_config(path, home=tmp_path, environ=env)
    assert loaded.settings.compression.threshold == 0.7
    assert loaded.settings.auxiliary.compression.model == "small"
    assert loaded.settings.plugins.disabled == ["a", "b"]
    assert loaded.source_of("compression.threshold") == Source(
        "environment", "HERMES__COMPRESSION__THRESHOLD"
    )


def test_environment_unknown_key_names_the_variable(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"HERMES__COMPRESSION__TRESHOLD: compression\.treshold"):
        load_config(None, home=tmp_path, environ={"HERMES__COMPRESSION__TRESHOLD": "1"})


def test_literal_secrets_are_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "plugin_config:\n  mem0:\n    api_key: m0-abcdef123456\n")
    with pytest.raises(ConfigError, match="secrets are not written in the config file"):
        load_config(path, home=tmp_path, environ={})
    path = write(tmp_path, "auxiliary:\n  compression:\n    api_key: sk-123\n")
    with pytest.raises(ConfigError, match="secrets are not written"):
        load_config(path, home=tmp_path, environ={})
    path = write(tmp_path, "auxiliary:\n  compression:\n    api_key_env: sk-abc123-not-a-name\n")
    with pytest.raises(ConfigError, match="must name an environment variable"):
        load_config(path, home=tmp_path, environ={})


def test_env_references_resolve_only_in_plugin_sections(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "plugin_config:\n  mem0:\n    api_key: {$env: MEM0_KEY}\n    top_k: 5\n",
    )
    loaded = load_config(path, home=tmp_path, environ={"MEM0_KEY": "secret-value"})
    assert loaded.plugin_section("mem0") == {"api_key": "secret-value", "top_k": 5}
    # the raw settings never hold the secret itself
    assert loaded.settings.plugin_config["mem0"]["api_key"] == {"$env": "MEM0_KEY"}
    assert "secret-value" not in repr(loaded)
    missing = load_config(path, home=tmp_path, environ={})
    with pytest.raises(ConfigError, match="MEM0_KEY is not set"):
        missing.plugin_section("mem0")


def test_dict_config_and_home_resolution(tmp_path: Path) -> None:
    loaded = load_config({"compression": {"threshold": 0.4}}, home=tmp_path, environ={})
    assert loaded.settings.compression.threshold == 0.4
    assert loaded.source_of("compression.threshold").kind == "argument"
    assert resolve_home(None, {"HERMES_HOME": str(tmp_path)}) == tmp_path
    assert resolve_home(tmp_path / "x", {"HERMES_HOME": "/elsewhere"}) == tmp_path / "x"
    assert resolve_home(None, {}) == Path(os.path.expanduser("~/.hermes"))


def test_items_cover_every_leaf_with_source(tmp_path: Path) -> None:
    loaded = load_config({"memory": {"provider": "mem0"}}, home=tmp_path, environ={})
    items = {key: (value, str(src)) for key, value, src in loaded.items()}
    assert items["memory.provider"] == ("mem0", "argument")
    assert items["compression.threshold"] == (0.5, "default")
    assert "auxiliary.compression.timeout" in items


def test_nested_plugin_secret_error_points_at_its_line(tmp_path: Path) -> None:
    path = write(tmp_path, "plugin_config:\n  mem0:\n    top_k: 3\n    api_key: abc\n")
    with pytest.raises(ConfigError) as err:
        load_config(path, home=tmp_path, environ={})
    assert f"{path}:4: plugin_config.mem0.api_key: secrets are not written" in str(err.value)
    path = write(tmp_path, "plugin_config:\n  mem0: 3\n")
    with pytest.raises(ConfigError, match=r":2: plugin_config.mem0: must be a mapping"):
        load_config(path, home=tmp_path, environ={})


def test_environment_merges_into_mapping_settings(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "compression:\n  model_thresholds: {gpt: 0.6, glm: 0.4}\n"
        "plugin_config:\n  foo: {url: 'https://x.example', token: {$env: FOO_TOKEN}}\n"
        "  bar: {a: 1}\n",
    )
    env = {
        "HERMES__PLUGIN_CONFIG__FOO__REGION": "eu",
        "HERMES__COMPRESSION__MODEL_THRESHOLDS__CLAUDE": "0.7",
    }
    s = load_config(path, home=tmp_path, environ=env).settings
    assert s.compression.model_thresholds == {"gpt": 0.6, "glm": 0.4, "claude": 0.7}
    assert s.plugin_config["foo"] == {
        "url": "https://x.example",
        "token": {"$env": "FOO_TOKEN"},
        "region": "eu",
    }
    assert s.plugin_config["bar"] == {"a": 1}


@pytest.mark.parametrize(
    ("yaml_text", "expected"),
    [
        ("compression:\n  threshold: .nan\n", "must be a finite number"),
        ("compression:\n  threshold: .inf\n", "must be a finite number"),
        ("compression:\n  model_thresholds: {gpt: 5.0}\n", "model_thresholds.gpt: must be at most"),
        ("model:\n  context_length: 2000\n  max_tokens: 5000\n", "must be less than"),
        ("plugins:\n  enabled: ['']\n", "is not a plugin name"),
        ("plugins:\n  disabled: ['../x']\n", "is not a plugin name"),
    ],
)
def test_out_of_range_and_cross_field_values(tmp_path: Path, yaml_text: str, expected: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(expected)):
        load_config(write(tmp_path, yaml_text), home=tmp_path, environ={})


def test_yaml_alias_bomb_is_refused_quickly(tmp_path: Path) -> None:
    lines = ["a0: &a0 {p: 1, q: 2}"]
    lines += [f"a{i}: &a{i} {{p: *a{i - 1}, q: *a{i - 1}}}" for i in range(1, 30)]
    path = write(tmp_path, "plugin_config:\n" + "".join(f"  {line}\n" for line in lines))
    with pytest.raises(ConfigError, match="YAML aliases"):
        load_config(path, home=tmp_path, environ={})
    plain = write(tmp_path, "plugin_config:\n" + "".join(
        f"  a{i}: {{p: 1, q: 2}}\n" for i in range(30)), "plain.yaml")  # fmt: skip

    def refused() -> None:
        with pytest.raises(ConfigError):
            load_config(path, home=tmp_path, environ={})

    ratio = work(refused) / work(lambda: load_config(plain, home=tmp_path, environ={}))
    assert ratio < 20, f"the bomb made {ratio:.1f}x the calls of an ordinary file of its size"


def test_ordinary_anchors_still_work(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "plugin_config:\n  base: &base {top_k: 5}\n  mem0: *base\n  other: *base\n",
    )
    s = load_config(path, home=tmp_path, environ={}).settings
    assert s.plugin_config["mem0"] == {"top_k": 5}


@pytest.mark.parametrize(
    "yaml_text",
    [
        "plugin_config:\n  p:\n    headers: [{Authorization: 'Bearer abcdefghijklmnop123'}]\n",
        "plugin_config:\n  p:\n    key: sk-abcdefghijklmnopqrstuvwx\n",
        "plugin_config:\n  p:\n    url: 'https://user:hunter2@db.example'\n",
        "auxiliary:\n  compression:\n    api_key_env: sk_live_51Habcdefghijklmnop\n",
        "auxiliary:\n  compression:\n    base_url: 'https://user:hunter2@llm.example/v1'\n",
    ],
)
def test_secret_shapes_are_refused_wherever_they_are(tmp_path: Path, yaml_text: str) -> None:
    with pytest.raises(ConfigError, match="secret"):
        load_config(write(tmp_path, yaml_text), home=tmp_path, environ={})


def test_secrets_from_the_environment_are_accepted(tmp_path: Path) -> None:
    env = {"HERMES__PLUGIN_CONFIG__FOO__API_KEY": "sk-live-abcdefghijklmnopqrstu"}
    s = load_config(None, home=tmp_path, environ=env).settings
    assert s.plugin_config["foo"]["api_key"] == "sk-live-abcdefghijklmnopqrstu"


def test_env_reference_form_in_core_sections(tmp_path: Path) -> None:
    path = write(tmp_path, "auxiliary:\n  compression:\n    api_key: {$env: SUMMARY_KEY}\n")
    loaded = load_config(path, home=tmp_path, environ={})
    assert loaded.settings.auxiliary.compression.api_key_env == "SUMMARY_KEY"
    assert loaded.source_of("auxiliary.compression.api_key_env").kind == "file"
