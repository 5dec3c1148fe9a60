"""The plugin host: call policies, isolation, real entry points, the one-provider rule."""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

import pytest
from fake_distribution import PLUGIN_MODULE, install_fake_distribution

from hermes_core import hookimpl
from hermes_core.errors import ConfigError, MissingExtraError, PluginLoadError
from hermes_core.host import Hermes
from hermes_core.plugins import PluginContext
from hermes_core.plugins.loading import PluginSpec, extra_installed, own_extras, own_install_line
from hermes_core.testing import make_host, record_hooks, registered
from hermes_core.types import Finding, SessionInfo

SESSION = SessionInfo(session_id="s1", user_id="u1")


class Pruner:
    def __init__(self, answer: str | None) -> None:
        self.answer = answer
        self.calls = 0

    @hookimpl
    def prune_tool_result(self, tool_name: str, result: str) -> str | None:
        self.calls += 1
        return self.answer


class Broken:
    @hookimpl
    def prune_tool_result(self) -> str:
        raise RuntimeError("boom")

    @hookimpl
    def memory_prefetch(self, query: str) -> str:
        raise RuntimeError("prefetch boom")

    @hookimpl
    def memory_sync(self) -> None:
        raise RuntimeError("sync boom")

    @hookimpl
    def scan_threat(self, content: str) -> list[Finding]:
        raise RuntimeError("scanner boom")


class Recaller:
    def __init__(self, text: str) -> None:
        self.text = text
        self.synced: list[Any] = []

    @hookimpl
    def memory_prefetch(self, query: str, session: SessionInfo) -> str:
        return f"{self.text}:{query}:{session.user_id}"

    @hookimpl
    def memory_sync(self, turn: Any) -> None:
        self.synced.append(turn)


class ExternalProvider:
    external_memory_provider = True

    def __init__(self, context: PluginContext | None = None) -> None:
        self.context = context

    @hookimpl
    def memory_prefetch(self, query: str) -> str:
        return "external"


def prune(host: Hermes) -> Any:
    return host.plugins.call(
        "prune_tool_result", tool_name="terminal", arguments={}, result="x" * 300, max_chars=80
    )


def test_first_result_newest_first_builtin_last(tmp_path: Path) -> None:
    builtin = Pruner("builtin")
    host = make_host(tmp_path, builtins=[PluginSpec("builtin", lambda ctx: builtin, builtin=True)])
    assert prune(host) == "builtin"
    third = Pruner("third-party")
    with registered(host, third, "third"):
        assert prune(host) == "third-party"
        assert builtin.calls == 1  # the first non-None answer stops the call
    passing = Pruner(None)
    with registered(host, passing, "passing"):
        assert prune(host) == "builtin"
        assert passing.calls == 1


def test_raising_pruner_keeps_the_original_and_is_logged_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    builtin = Pruner("builtin")
    host = make_host(tmp_path, builtins=[PluginSpec("builtin", lambda ctx: builtin, builtin=True)])
    host.plugins.register(Broken(), name="broken")
    with caplog.at_level(logging.WARNING, logger="hermes_context.plugins"):
        assert prune(host) is None  # the caller keeps the original result
        assert prune(host) is None
    assert builtin.calls == 0
    warnings = [r for r in caplog.records if "broken" in r.getMessage()]
    assert len(warnings) == 1
    assert [e.plugin for e in host.plugins.call_errors] == ["broken", "broken"]


def test_raising_summariser_passes_to_the_next_implementation(tmp_path: Path) -> None:
    class Summariser:
        def __init__(self, answer: str | None, fail: bool = False) -> None:
            self.answer, self.fail = answer, fail

        @hookimpl
        def summarize_middle(self, messages: list[Any]) -> str | None:
            if self.fail:
                raise RuntimeError("llm down")
            return self.answer

    host = make_host(
        tmp_path,
        builtins=[PluginSpec("builtin", lambda ctx: Summariser("fallback"), builtin=True)],
    )
    host.plugins.register(Summariser(None, fail=True), name="llm")
    kwargs = {"messages": [], "previous_summary": None, "budget_tokens": 100, "context": None}
    assert host.plugins.call("summarize_middle", **kwargs) == "fallback"
    assert [e.hook for e in host.plugins.call_errors] == ["summarize_middle"]


def test_strict_reraises(tmp_path: Path) -> None:
    host = make_host(tmp_path, {"plugins": {"strict": True}})
    host.plugins.register(Broken(), name="broken")
    with pytest.raises(RuntimeError, match="boom"):
        prune(host)


def test_collect_in_stable_order_and_failures_contribute_nothing(tmp_path: Path) -> None:
    host = make_host(tmp_path)
    host.plugins.register(Recaller("a"), name="a")
    host.plugins.register(Broken(), name="broken")
    host.plugins.register(Recaller("b"), name="b")
    result = host.plugins.call("memory_prefetch", query="q", session=SESSION)
    assert result == ["a:q:u1", "b:q:u1"]


def test_broadcast_reaches_everyone_despite_errors(tmp_path: Path) -> None:
    host = make_host(tmp_path)
    first, last = Recaller("a"), Recaller("b")
    host.plugins.register(first, name="a")
    host.plugins.register(Broken(), name="broken")
    host.plugins.register(last, name="b")
    assert host.plugins.call("memory_sync", turn="t1", session=SESSION) is None
    assert first.synced == ["t1"] and last.synced == ["t1"]


def test_scan_threat_fails_closed(tmp_path: Path) -> None:
    class Clean:
        @hookimpl
        def scan_threat(self, content: str, scope: str) -> list[Finding]:
            return []

    class Sloppy:
        @hookimpl
        def scan_threat(self, content: str) -> str:
            return "looks fine"

    host = make_host(tmp_path)
    host.plugins.register(Clean(), name="clean")
    assert host.plugins.call("scan_threat", content="hello", scope="strict") == []
    host.plugins.register(Broken(), name="broken")
    host.plugins.register(Sloppy(), name="sloppy")
    findings = host.plugins.call("scan_threat", content="hello", scope="strict")
    assert [(f.pattern_id, f.plugin) for f in findings] == [
        ("scanner-error", "broken"),
        ("scanner-error", "sloppy"),
    ]


def test_shutdown_runs_in_reverse_order(tmp_path: Path) -> None:
    order: list[str] = []

    def closer(name: str) -> object:
        class Closer:
            @hookimpl
            def memory_shutdown(self) -> None:
                order.append(name)

        return Closer()

    host = make_host(
        tmp_path, builtins=[PluginSpec("first", lambda ctx: closer("first"), builtin=True)]
    )
    host.plugins.register(closer("second"), name="second")
    host.close()
    host.close()
    assert order == ["second", "first"]


def test_disabled_builtin_is_not_built_or_called(tmp_path: Path) -> None:
    built: list[str] = []

    def factory(ctx: PluginContext) -> object:
        built.append(ctx.name)
        return Pruner("builtin")

    host = make_host(
        tmp_path,
        {"plugins": {"disabled": ["builtin"]}},
        builtins=[PluginSpec("builtin", factory, builtin=True)],
    )
    assert built == []
    assert host.plugins.records["builtin"].status == "disabled"
    assert prune(host) is None


def test_second_external_provider_is_a_config_error_naming_both(tmp_path: Path) -> None:
    host = make_host(tmp_path)
    host.plugins.register(ExternalProvider(), name="mem0")
    with pytest.raises(ConfigError) as err:
        host.plugins.register(ExternalProvider(), name="honcho")
    assert "'mem0'" in str(err.value) and "'honcho'" in str(err.value)
    assert "memory.provider" in str(err.value)
    # the built-in file memory is not external and does not count
    host.plugins.register(Recaller("file"), name="file_memory")
    assert host.plugins.external_provider() == "mem0"


def test_misspelled_hook_fails_at_start_up(tmp_path: Path) -> None:
    class Typo:
        @hookimpl
        def prune_tool_results(self, result: str) -> str:
            return result

    host = make_host(tmp_path)
    with pytest.raises(PluginLoadError, match="did you mean 'prune_tool_result'"):
        host.plugins.register(Typo(), name="typo")
    assert host.plugins.get_plugin("typo") is None


def test_unknown_argument_fails_at_start_up(tmp_path: Path) -> None:
    class BadArgs:
        @hookimpl
        def prune_tool_result(self, tool: str) -> str:
            return tool

    host = make_host(tmp_path)
    with pytest.raises(PluginLoadError, match="invalid hook implementation"):
        host.plugins.register(BadArgs(), name="badargs")


def test_wrappers_are_refused(tmp_path: Path) -> None:
    class Wrapper:
        @hookimpl(wrapper=True)
        def prune_tool_result(self) -> Any:
            return (yield)

    host = make_host(tmp_path)
    with pytest.raises(PluginLoadError, match="wrapper"):
        host.plugins.register(Wrapper(), name="wrapper")


def test_builtin_that_fails_to_start_is_isolated(tmp_path: Path) -> None:
    def explode(ctx: PluginContext) -> object:
        raise ValueError("no such thing")

    good = Pruner("good")
    host = make_host(
        tmp_path,
        builtins=[
            PluginSpec("bad", explode, builtin=True),
            PluginSpec("good", lambda ctx: good, builtin=True),
        ],
    )
    assert host.plugins.records["bad"].status.startswith("error: plugin 'bad' failed to start")
    assert prune(host) == "good"
    with pytest.raises(PluginLoadError):
        make_host(
            tmp_path,
            {"plugins": {"strict": True}},
            builtins=[PluginSpec("bad", explode, builtin=True)],
        )


def test_recorder_sees_calls(tmp_path: Path) -> None:
    host = make_host(tmp_path)
    host.plugins.register(Recaller("a"), name="a")
    with record_hooks(host) as recorder:
        host.plugins.call("memory_prefetch", query="q", session=SESSION)
    assert [c.hook for c in recorder.calls] == ["memory_prefetch"]
    assert recorder.named("memory_prefetch")[0].result == ["a:q:u1"]


def test_fixtures_from_the_testing_plugin(hermes_host: Hermes, register_plugin: Any) -> None:
    register_plugin(Pruner("fixture"), "fixture")
    assert prune(hermes_host) == "fixture"


# --- real entry points from a distribution on sys.path --------------------------------


@pytest.fixture
def fake_dist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "site"
    install_fake_distribution(
        root,
        "hermes_thirdparty",
        {
            "recall": "thirdparty_plugin:Recall",
            "extprov": "thirdparty_plugin:External",
            "otherprov": "thirdparty_plugin:External",
            "needs_sdk": "thirdparty_needs_sdk:Plugin",
            "needs_extra": "thirdparty_needs_sdk:Plugin [fancy]",
            "not_a_class": "thirdparty_plugin",
        },
        {
            "thirdparty_plugin": PLUGIN_MODULE,
            "thirdparty_needs_sdk": "import some_sdk_that_is_not_installed\nclass Plugin: ...\n",
        },
    )
    monkeypatch.syspath_prepend(str(root))
    return root


def test_entry_point_plugins_load_only_when_named(tmp_path: Path, fake_dist: Path) -> None:
    host = make_host(
        tmp_path,
        {
            "plugins": {"enabled": ["recall"]},
            "plugin_config": {"recall": {"greeting": {"$env": "GREETING"}}},
        },
        environ={"GREETING": "hi"},
    )
    assert host.plugins.call("memory_prefetch", query="q", session=SESSION) == ["recall:hi:q"]
    record = host.plugins.records["recall"]
    assert (record.distribution, record.version, record.status) == (
        "hermes_thirdparty",
        "1.2.3",
        "active",
    )
    assert record.hooks == ["memory_prefetch"]
    assert "extprov" not in host.plugins.records
    available = {r.name: r.status for r in host.plugins.available()}
    assert available["extprov"] == "available (not enabled)"


def test_missing_dependency_and_extra_messages(tmp_path: Path, fake_dist: Path) -> None:
    host = make_host(tmp_path, {"plugins": {"enabled": ["needs_sdk", "needs_extra", "recall"]}})
    statuses = {name: r.status for name, r in host.plugins.records.items()}
    assert statuses["needs_extra"] == "missing-extra: pip install 'hermes_thirdparty[fancy]'"
    assert statuses["needs_sdk"].startswith("missing-extra: pip install --force-reinstall")
    assert statuses["recall"] == "active"  # the rest keeps working


def test_unknown_plugin_and_non_class_entry_point(tmp_path: Path, fake_dist: Path) -> None:
    host = make_host(tmp_path, {"plugins": {"enabled": ["not_a_class"]}})
    assert "must name a plugin class" in host.plugins.records["not_a_class"].status
    for strict in (False, True):  # an unknown name is a configuration error, strict or not
        with pytest.raises(ConfigError, match=r"plugins\.enabled: no plugin is named 'nosuch'"):
            make_host(tmp_path, {"plugins": {"enabled": ["nosuch"], "strict": strict}})


def test_two_external_providers_from_config(tmp_path: Path, fake_dist: Path) -> None:
    with pytest.raises(ConfigError) as err:
        make_host(
            tmp_path, {"plugins": {"enabled": ["otherprov"]}, "memory": {"provider": "extprov"}}
        )
    assert "'otherprov'" in str(err.value) and "'extprov'" in str(err.value)
    host = make_host(tmp_path, {"memory": {"provider": "extprov"}})
    assert host.plugins.external_provider() == "extprov"


@pytest.mark.skipif("mem0" not in own_extras(), reason="hermes-context is not installed")
def test_selecting_mem0_makes_it_active_or_names_the_install_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The issue's check: with the extra installed, ``memory.provider: mem0`` (and its key in
    the environment) makes it the active provider; without it, the exact pip line."""
    monkeypatch.setenv("MEM0_API_KEY", "m0-test-not-a-real-key")
    if extra_installed("mem0"):
        host = make_host(tmp_path, {"memory": {"provider": "mem0"}})
        status = host.plugins.records["mem0"].status
        assert status == "active" and host.plugins.external_provider() == "mem0"
    else:  # the named provider cannot run: the host refuses to start (issue 27, item 2)
        with pytest.raises(MissingExtraError, match=re.escape(own_install_line("mem0"))):
            make_host(tmp_path, {"memory": {"provider": "mem0"}})


def test_caller_mistakes_raise_instead_of_blaming_plugins(tmp_path: Path) -> None:
    host = make_host(tmp_path)
    host.plugins.register(Recaller("a"), name="a")
    with pytest.raises(TypeError, match="missing session"):
        host.plugins.call("memory_prefetch", query="q")
    with pytest.raises(TypeError, match="unknown colour"):
        host.plugins.call("memory_prefetch", query="q", session=SESSION, colour="red")
    with pytest.raises(TypeError, match="did you mean 'memory_prefetch'"):
        host.plugins.call("memory_prefech", query="q", session=SESSION)
    assert host.plugins.call_errors == []


def test_collect_order_honours_tryfirst_and_trylast(tmp_path: Path) -> None:
    def recaller(text: str, **marks: bool) -> object:
        class Marked:
            @hookimpl(**marks)
            def memory_prefetch(self) -> str:
                return text

        return Marked()

    host = make_host(
        tmp_path, builtins=[PluginSpec("builtin", lambda ctx: recaller("builtin"), builtin=True)]
    )
    host.plugins.register(recaller("late", trylast=True), name="late")
    host.plugins.register(recaller("plain"), name="plain")
    host.plugins.register(recaller("early", tryfirst=True), name="early")
    result = host.plugins.call("memory_prefetch", query="q", session=SESSION)
    assert result == ["early", "builtin", "plain", "late"]


def test_plugins_built_before_a_failed_load_are_shut_down(tmp_path: Path) -> None:
    closed: list[str] = []

    class Closer:
        @hookimpl
        def memory_shutdown(self) -> None:
            closed.append("first")

    class SecondExternal(ExternalProvider):
        pass

    with pytest.raises(ConfigError):
        make_host(
            tmp_path,
            builtins=[
                PluginSpec("first", lambda ctx: Closer(), builtin=True),
                PluginSpec("ext1", lambda ctx: ExternalProvider(), builtin=True),
                PluginSpec("ext2", lambda ctx: SecondExternal(), builtin=True),
            ],
        )
    assert closed == ["first"]


def test_hook_named_method_without_marker_fails_at_start_up(tmp_path: Path) -> None:
    class Forgot:
        def memory_prefetch(self, query: str) -> str:
            return query

    host = make_host(tmp_path)
    with pytest.raises(PluginLoadError, match="no @hookimpl marker"):
        host.plugins.register(Forgot(), name="forgot")


def test_plugin_without_hooks_warns_and_unknown_disabled_names_are_refused(
    tmp_path: Path,
) -> None:
    with pytest.raises(ConfigError, match=r"plugins\.disabled: no plugin is named 'no_such"):
        make_host(tmp_path, {"plugins": {"disabled": ["no_such_plugin"]}})
    host = make_host(tmp_path)
    host.plugins.register(object(), name="inert")
    assert any("'inert' implements no hooks" in w for w in host.plugins.warnings)


def test_failed_plugin_keeps_its_distribution(tmp_path: Path, fake_dist: Path) -> None:
    host = make_host(tmp_path, {"plugins": {"enabled": ["needs_extra"]}})
    record = host.plugins.records["needs_extra"]
    assert (record.distribution, record.version) == ("hermes_thirdparty", "1.2.3")
    assert "\n" not in record.status


def test_a_refused_second_provider_is_shut_down(tmp_path: Path) -> None:
    class Provider:
        external_memory_provider = True

        def __init__(self) -> None:
            self.closed = False

        @hookimpl
        def memory_shutdown(self) -> None:
            self.closed = True

    host = make_host(tmp_path)
    host.plugins.register(Provider(), name="first")
    second = Provider()
    with pytest.raises(ConfigError, match="two external memory providers"):
        host.plugins.register(second, name="second")
    assert second.closed is True


# --- failures never print a secret (issue 11 §4.3) ---------------------------------------------

LEAKY_TOKEN = "ghp_" + "Zq7Xw2Vb9Nm4Lk8Jh3Gf6Ds1Aa5Pp0Oo1Ii2"


class Leaky:
    """A plugin whose error quotes a request, as provider SDK errors do."""

    @hookimpl
    def prune_tool_result(self) -> str:
        try:
            raise ValueError(f"upstream said: bad header Authorization: Bearer {LEAKY_TOKEN}")
        except ValueError as cause:
            raise RuntimeError(f"call failed with token={LEAKY_TOKEN}") from cause

    @hookimpl
    def scan_threat(self, content: str) -> list[Finding]:
        raise RuntimeError(f"scanner failed for api_key={LEAKY_TOKEN}")


def test_failure_logs_at_debug_carry_a_redacted_traceback(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    host = make_host(tmp_path)
    host.plugins.register(Leaky(), name="leaky")
    with caplog.at_level(logging.DEBUG, logger="hermes_context.plugins"):
        assert prune(host) is None
        assert prune(host) is None  # the second failure logs at DEBUG only
    records = [r for r in caplog.records if r.name == "hermes_context.plugins"]
    assert records and all(r.exc_info is None for r in records)  # nothing raw for a handler
    assert LEAKY_TOKEN not in caplog.text
    tracebacks = [r.getMessage() for r in records if "traceback" in r.getMessage()]
    assert len(tracebacks) == 2
    for text in tracebacks:
        assert "Traceback (most recent call last)" in text
        assert "RuntimeError: call failed with token=[REDACTED:github_token]" in text
        assert "ValueError" in text and "direct cause" in text  # the chain is kept
    assert host.plugins.call_errors[0].error.args[0].endswith(LEAKY_TOKEN)  # in-process only


def test_failure_traceback_is_not_built_above_debug(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    host = make_host(tmp_path)
    host.plugins.register(Leaky(), name="leaky")
    with caplog.at_level(logging.WARNING, logger="hermes_context.plugins"):
        prune(host)
    assert [r.levelno for r in caplog.records] == [logging.WARNING]
    assert LEAKY_TOKEN not in caplog.text and "[REDACTED:github_token]" in caplog.text


def test_failing_scanner_finding_is_redacted(tmp_path: Path) -> None:
    host = make_host(tmp_path)
    host.plugins.register(Leaky(), name="leaky")
    (finding,) = host.plugins.call("scan_threat", content="hello", scope="strict")
    assert finding.pattern_id == "scanner-error"
    assert LEAKY_TOKEN not in repr(finding) and "[REDACTED:github_token]" in repr(finding)
