"""Transcripts: reading and writing files, validation, turn groups and the wire form.

:mod:`~hermes_core.transcript.files` reads and writes transcript files (JSON, ``{"messages"}``,
JSON Lines); :mod:`~hermes_core.transcript.validation` finds every reason a provider would
reject a list of messages; :mod:`~hermes_core.transcript.messages` holds the pure helpers
(turn groups, ``to_wire``, accessors).
"""

from __future__ import annotations

from hermes_core.transcript.files import read_transcript, write_transcript
from hermes_core.transcript.messages import TurnGroup, to_wire, turn_groups
from hermes_core.transcript.validation import validate_messages

__all__ = [
    "TurnGroup",
    "read_transcript",
    "to_wire",
    "turn_groups",
    "validate_messages",
    "write_transcript",
]
