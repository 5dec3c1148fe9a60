"""``python -m hermes_core`` is the ``hermes-context`` command."""

from hermes_core.cli import main

raise SystemExit(main())
