"""Each id's error says what works for that id: a session always needs one (None is no
session id), a user id may be None (a single-user home). (Here beside the other Session
tests this change touched; hermes_core/host/session_state.py:check_id.)"""

from __future__ import annotations

from pathlib import Path

import pytest

import hermes_core as hc
from hermes_core.config.loader import load_config


@pytest.mark.parametrize("bad", ["", "   ", None, 7])
def test_formats_a_bad_session_id_names_a_fix_that_works(tmp_path: Path, bad: object) -> None:
    with (
        hc.Hermes(load_config({}, home=tmp_path, environ={})) as hermes,
        pytest.raises(hc.SessionError, match="session_id") as caught,
    ):
        hermes.session(bad)  # type: ignore[arg-type]
    message = str(caught.value)
    assert "None" not in message.replace("NoneType", "")  # None is no session id
    assert "'conv-1'" in message


@pytest.mark.parametrize("bad", ["", "   ", 7])
def test_formats_a_bad_user_id_points_to_none(tmp_path: Path, bad: object) -> None:
    with hc.Hermes(load_config({}, home=tmp_path, environ={})) as hermes:
        with pytest.raises(hc.SessionError, match="user_id") as caught:
            hermes.session("s1", user_id=bad)  # type: ignore[arg-type]
        assert "None for a single-user home" in str(caught.value)
        hermes.session("s2", user_id=None).close()  # what the hint says works
