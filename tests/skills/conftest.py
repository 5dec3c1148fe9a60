"""Fixtures for the skills tests: a library on a temp home with the toy scanner."""

from __future__ import annotations

from pathlib import Path

import pytest
from skill_support import library

from hermes_core.skills import SkillLibrary


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "home" / "skills"


@pytest.fixture
def lib(root: Path) -> SkillLibrary:
    return library(root)
