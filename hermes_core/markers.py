"""Pluggy markers for the project name ``hermes_context``.

Plugin authors decorate methods with :data:`hookimpl`; the core declares hooks with
:data:`hookspec`. Both are bound to one project name so that a stray ``pytest`` or ``tox``
marker on a method is never mistaken for one of ours.
"""

from __future__ import annotations

import pluggy

PROJECT_NAME = "hermes_context"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)
