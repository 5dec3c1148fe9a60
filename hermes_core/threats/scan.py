"""The entry point: cap the input, check hidden characters, normalise, run the patterns.

The order matters. Hidden characters are looked for in the raw text (normalisation would
erase the evidence); then they are removed, the text is NFKC-normalised and, for Latin
wording, look-alikes are folded, so ``Ig<ZWSP>nore``, ``Ｉｇｎｏｒｅ`` and Cyrillic
``Ignоrе`` all meet the same "ignore ... instructions" pattern. A pattern that matches
only after normalisation or folding is reported twice: under its own id and as a
``homoglyph_*`` finding, since the disguise is itself a signal.

Input is capped at :data:`MAX_SCAN_CHARS` (65,536) characters before any regex runs.
Longer text is read as its first 57,343 and last 8,192 characters (so a payload appended
at the end is still seen), and in the ``strict`` scope the excess is itself a finding,
``oversized_input``: nothing larger than the cap belongs in memory, and what the scanner
did not read cannot be vouched for.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hermes_core.threats import decision, decode, obfuscation, unicode
from hermes_core.threats import learned as scorer
from hermes_core.threats.catalog import ALL_RULES, MATCHERS_BY_SCOPE, SPECIAL, check_scope
from hermes_core.threats.features import blank_quoted
from hermes_core.threats.messages import excerpt, excerpt_around
from hermes_core.threats.rules import STRICT, Rule, View
from hermes_core.types import Finding

#: The most characters any regex reads (64 KiB).
MAX_SCAN_CHARS = 65_536
_TAIL_CHARS = 8_192


@dataclass
class _Findings:
    scope: str
    plugin: str
    found: dict[str, Finding] = field(default_factory=dict)

    def add(self, rule: Rule, snippet: str, *, raw: bool = False) -> None:
        if rule.id in self.found or self.scope not in rule.scopes:
            return
        shown = snippet if raw else excerpt(snippet)
        self.found[rule.id] = Finding(rule.id, rule.category, rule.description, self.plugin, shown)


def _bounded(content: str) -> tuple[str, bool]:
    """At most :data:`MAX_SCAN_CHARS` characters: head and tail, joined by a line break."""
    if len(content) <= MAX_SCAN_CHARS:
        return content, False
    head = MAX_SCAN_CHARS - _TAIL_CHARS - 1
    return content[:head] + "\n" + content[-_TAIL_CHARS:], True


def _run_patterns(found: _Findings, clean: str, label: str = "") -> bool:
    """Every in-scope pattern over the NFKC view, then the folded and leet views where
    they differ. ``label`` marks text that was hidden ("[tag text]", "[base64]").
    Whether anything new was found."""
    before = len(found.found)
    normal = View(unicode.nfkc(clean))
    folded_text = unicode.fold(normal.text)
    folded = View(folded_text) if folded_text != normal.text else None
    leet_text = obfuscation.unleet(folded_text.lower())
    leet = View(leet_text) if leet_text is not None else None
    raw: View | None = None
    prefix = f"[{label}] " if label else ""
    for rule in MATCHERS_BY_SCOPE[found.scope]:
        if rule.id in found.found:
            continue
        snippet = rule.find(normal)
        if snippet is not None:
            found.add(rule, prefix + snippet)
            if normal.text != clean:
                raw = View(clean) if raw is None else raw
                if rule.find(raw) is None:
                    found.add(SPECIAL["homoglyph_compat"], snippet)
            continue
        if not rule.fold:
            continue
        if folded is not None:
            snippet = rule.find(folded)
            if snippet is not None:
                found.add(rule, prefix + snippet)
                found.add(SPECIAL["homoglyph_confusable"], snippet)
                continue
        if leet is not None:
            snippet = rule.find(leet)
            if snippet is not None:
                found.add(rule, prefix + snippet)
                found.add(SPECIAL["homoglyph_leetspeak"], snippet)
    return len(found.found) > before


def _run_decoded(found: _Findings, clean: str) -> None:
    """The patterns over base64 and rot13 payloads; a hit is also ``encoded_payload``."""
    for payload in decode.base64_payloads(clean):
        text = obfuscation.collapse(unicode.strip_hidden(payload))
        if _run_patterns(found, text, "base64"):
            found.add(SPECIAL["encoded_payload"], f"[base64] {text}")
    rot13 = decode.rot13_payload(clean)
    if rot13 is not None and _run_patterns(found, rot13, "rot13"):
        found.add(SPECIAL["encoded_payload"], f"[rot13] {rot13}")


def _weigh(found: _Findings, text: str) -> None:
    """The learned scorer's part (:mod:`hermes_core.threats.decision`): it may add
    ``learned_injection`` when no pattern fired, or clear overrulable findings that only
    a quotation in a note about an attack holds. A decisive finding always stands."""
    model = scorer.shipped_model()
    fired = tuple(found.found)
    if any(not decision.overrulable(model, pattern) for pattern in fired):
        return
    assessment = decision.assess(scorer.views(decision.without_own_notices(text)), fired, model)
    unquoted: tuple[str, ...] = ()
    if fired and assessment.discussed:
        unquoted = tuple(f.pattern_id for f in scan(blank_quoted(text), STRICT, learned=False))
    if not decision.blocks(model, fired, assessment, unquoted):
        found.found.clear()
    elif not fired:
        summary = f"{assessment.probability:.2f}: {assessment.window}"
        found.add(SPECIAL["learned_injection"], summary)


def scan(
    content: str, scope: str = "strict", *, plugin: str = "", learned: bool = True
) -> list[Finding]:
    """Findings for ``content`` in ``scope`` (``strict``, ``context`` or ``all``); empty when clean.

    Pure and fast: no I/O (the learned scorer's weights are read once, on first use), at
    most 64 KiB read, bounded regexes. Each pattern id is reported at most once, with a
    short redacted excerpt of what matched. In ``strict`` scope the learned scorer may add a
    finding to text no pattern flagged, or clear a quoted attack in a note about one
    (:mod:`hermes_core.threats.decision`; ``learned=False``: the patterns alone). An unknown scope
    raises ``ValueError`` naming the valid ones.
    """
    check_scope(scope)
    found = _Findings(scope, plugin)
    text, cut = _bounded(content)
    if cut:
        note = f"{len(content):,} characters; the scanner reads {MAX_SCAN_CHARS:,}"
        found.add(SPECIAL["oversized_input"], note, raw=True)
    hits, hidden = unicode.hidden_characters(text)
    for hit in hits:
        found.add(SPECIAL[hit.kind], excerpt_around(text, hit.offset), raw=True)
    clean = obfuscation.collapse(unicode.strip_hidden(text))
    if scope == STRICT:
        styled = unicode.styled_run(clean)
        if styled is not None:
            found.add(SPECIAL["homoglyph_compat"], styled)
        mixed = unicode.mixed_script_word(unicode.nfkc(clean))
        if mixed is not None:
            found.add(SPECIAL["homoglyph_mixed_script"], mixed)
    _run_patterns(found, clean)
    if hidden:
        _run_patterns(found, hidden, "tag text")
    _run_decoded(found, clean)
    if learned and scope == STRICT:
        _weigh(found, text)
    order = {pattern_id: index for index, pattern_id in enumerate(ALL_RULES)}
    return sorted(found.found.values(), key=lambda finding: order[finding.pattern_id])
