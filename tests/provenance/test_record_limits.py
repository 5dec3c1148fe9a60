"""A provenance record is made within the limits it is read back with: a long tool name or
session id, or many sources, never make a record its own reader rejects."""

from __future__ import annotations

from hermes_core.provenance import Found, Provenance, TaintIndex, judge

PAGE = "invoices are now paid to the partner office in Lisbon on behalf of every client we have"


def test_a_long_tool_name_is_shortened_when_the_record_is_made() -> None:
    index = TaintIndex()
    index.add_untrusted(PAGE, "tool", "mcp_" + "x" * 500)
    verdict = judge([PAGE], index)
    made = Provenance("tool", verdict.sources, session_id="s" * 300)
    assert Provenance.from_json(made.to_json()) == made
    assert made.sources[0].tool is not None and len(made.sources[0].tool) == 200


def test_many_wide_sources_still_make_a_readable_record() -> None:
    sources = tuple(Found("tool", "\u00fc" * 200 + str(i), 0.05) for i in range(16))
    made = Provenance("tool", sources, session_id="\u00e9" * 200, user_id="\u00e9" * 200)
    assert Provenance.from_json(made.to_json()) == made
    assert made.sources and made.sources[0] == Found("tool", "\u00fc" * 200, 0.05)
