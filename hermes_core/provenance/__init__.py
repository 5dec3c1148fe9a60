"""Provenance of memory and skill writes: where a write's words came from, and the policy
for words from untrusted sources (``memory.untrusted_writes``). See docs/memory.md."""

from hermes_core.provenance.audit import EVENTS, AuditSink, add_sink, audit
from hermes_core.provenance.context import WriteContext, current, using
from hermes_core.provenance.policy import Assessment, assess, decide, refusal_text
from hermes_core.provenance.record import (
    SOURCE_KINDS,
    UNTRUSTED_KINDS,
    Found,
    Provenance,
)
from hermes_core.provenance.taint import TaintIndex, Verdict, judge

__all__ = [
    "EVENTS",
    "SOURCE_KINDS",
    "UNTRUSTED_KINDS",
    "Assessment",
    "AuditSink",
    "Found",
    "Provenance",
    "TaintIndex",
    "Verdict",
    "WriteContext",
    "add_sink",
    "assess",
    "audit",
    "current",
    "decide",
    "judge",
    "refusal_text",
    "using",
]
