"""Settings that name a feature this version does not have are refused, not ignored."""

from __future__ import annotations

import pytest

import hermes_core as hc
from hermes_core.errors import ConfigError


def test_micro_compact_true_is_refused_with_what_to_do() -> None:
    with pytest.raises(ConfigError) as caught:
        hc.load_config({"compression": {"micro_compact": True}})
    message = str(caught.value)
    assert "compression.micro_compact" in message
    assert "not available in this version" in message
    assert "remove the key or set it to false" in message


def test_micro_compact_false_or_absent_loads() -> None:
    assert hc.load_config({"compression": {"micro_compact": False}}).settings.compression
    assert hc.load_config({}).settings.compression.micro_compact is False
