"""Every pattern in one table: the matchers, plus the ids reported by the Unicode and size checks.

The order is the order findings come back in. Ids are stable: tests, user configuration
and the blocked-entry notice in the system prompt refer to them.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Final

from hermes_core.threats import (
    codeleak,
    crosslingual,
    deceit,
    exfil,
    foreign,
    fraud,
    markup,
    multilingual,
    override,
    paraphrase,
    persist,
    persona,
    role,
    secrets,
    triggers,
)
from hermes_core.threats.context import combine, described, mention, rehearsal, trivial
from hermes_core.threats.rules import EVERYWHERE, NOT_ALL, SCOPES, STRICT_ONLY, Rule, Veto

#: Reported by the Unicode and size checks in :mod:`hermes_core.threats.scan`, not by a regex.
SPECIAL: Final = {
    rule.id: rule
    for rule in (
        Rule(
            "invisible_unicode",
            "invisible_unicode",
            "zero-width, word-joiner, invisible-operator or BOM characters hidden in the text",
            NOT_ALL,
        ),
        Rule(
            "bidi_control",
            "invisible_unicode",
            "bidirectional embedding, override or isolate characters that reorder the text",
            EVERYWHERE,
        ),
        Rule(
            "unicode_tag",
            "invisible_unicode",
            "Unicode tag characters, which spell text no screen shows",
            EVERYWHERE,
        ),
        Rule(
            "homoglyph_confusable",
            "homoglyph",
            "a threat pattern spelled with Cyrillic or Greek look-alikes or stray accents",
            EVERYWHERE,
        ),
        Rule(
            "homoglyph_compat",
            "homoglyph",
            "full-width or styled letters (a threat pattern in them, or a run of them)",
            EVERYWHERE,
        ),
        Rule(
            "homoglyph_leetspeak",
            "homoglyph",
            "a threat pattern spelled with digits for letters or texting spellings (1gn0r3, u r)",
            EVERYWHERE,
        ),
        Rule(
            "homoglyph_mixed_script",
            "homoglyph",
            "a word mixing Latin letters with Cyrillic or Greek look-alikes",
            STRICT_ONLY,
        ),
        Rule(
            "encoded_payload",
            "hidden_markup",
            "a threat pattern inside base64- or rot13-encoded text",
            EVERYWHERE,
        ),
        Rule(
            "learned_injection",
            "learned",
            "no single pattern, but the learned scorer reads the wording as an injection",
            STRICT_ONLY,
        ),
        Rule(
            "oversized_input",
            "hidden_markup",
            "text beyond the 64 KiB the scanner reads, which could hide anything",
            STRICT_ONLY,
        ),
    )
}

#: Vetoes beyond the default (a quoted mention, for every regex rule): a role-play the
#: user asked to rehearse, a trivial change the user need not hear about, a command the
#: note describes rather than orders.
_VETOES: Final[dict[str, Veto]] = {
    "role_you_are_now": combine(mention, rehearsal),
    "role_pretend": combine(mention, rehearsal),
    "role_act_as": combine(mention, rehearsal),
    "role_new_name": combine(mention, rehearsal),
    "deception_hide_from_user": combine(mention, trivial),
    "secret_read_file": combine(mention, described),
    "secret_read_view": combine(mention, described),
}
#: Language-independent checks that widen an existing id (see :mod:`crosslingual`).
_CHECKS: Final = {
    "exfil_send_to_url": crosslingual.SEND_SECRET,
    "c2_tasking": crosslingual.POLL_AND_RUN,
    "persistence_agent_config": crosslingual.PLANT_RULE,
}


def _completed(rule: Rule) -> Rule:
    veto = rule.veto or _VETOES.get(rule.id) or (mention if rule.variants else None)
    return replace(rule, veto=veto, check=rule.check or _CHECKS.get(rule.id))


MATCHERS: Final[tuple[Rule, ...]] = tuple(
    _completed(rule)
    for rule in (
        *override.RULES,
        *paraphrase.RULES,
        *foreign.RULES,
        *crosslingual.RULES,
        *triggers.RULES,
        *role.RULES,
        *persona.RULES,
        *multilingual.RULES,
        *deceit.RULES,
        *fraud.RULES,
        *exfil.RULES,
        *codeleak.RULES,
        *persist.RULES,
        *markup.RULES,
        *secrets.RULES,
    )
)

ALL_RULES: Final = {rule.id: rule for rule in (*SPECIAL.values(), *MATCHERS)}
PATTERN_IDS: Final[tuple[str, ...]] = tuple(ALL_RULES)
MATCHERS_BY_SCOPE: Final = {
    scope: tuple(rule for rule in MATCHERS if scope in rule.scopes) for scope in SCOPES
}


def patterns_for(scope: str) -> tuple[str, ...]:
    """The pattern ids that can be reported in ``scope``."""
    check_scope(scope)
    return tuple(rule.id for rule in ALL_RULES.values() if scope in rule.scopes)


def check_scope(scope: str) -> None:
    """Refuse an unknown scope, naming the valid ones."""
    if scope not in SCOPES:
        valid = ", ".join(repr(name) for name in SCOPES)
        raise ValueError(f"unknown threat-scan scope {scope!r}; valid scopes: {valid}")
