"""Configuration: ``config.yaml`` into typed settings, strictly, with the source of every value.

:mod:`~hermes_core.config.settings` holds every key, its default and its documentation;
:mod:`~hermes_core.config.yaml_source` reads YAML with line numbers;
:mod:`~hermes_core.config.values` checks one value (type, bounds, the secrets rule);
:mod:`~hermes_core.config.loader` puts them together (file, dict, environment, provenance).
"""

from __future__ import annotations

from hermes_core.config.loader import LoadedConfig, Source, load_config, render_value
from hermes_core.config.settings import Settings

__all__ = ["LoadedConfig", "Settings", "Source", "load_config", "render_value"]
