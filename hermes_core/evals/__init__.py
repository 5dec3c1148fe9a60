"""Offline measures of what compaction keeps (``hermes-context eval``); see docs/eval.md."""
