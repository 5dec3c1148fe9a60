"""Polarity words: the negations a review's note must carry as the user's words do.

Why: the backing rule compares meaningful words, and "not", "never", "don't" carry no topic, so
"please don't delete the backups folder" once backed "User wants the backups folder deleted".
A negation is a mark of its own, with a scope: the meaningful words after it in its clause.
The note and the user message its quote comes from must agree in both directions, counted:
every negation of the note must cover words a negation of the message covers, and every
negation of the message whose words the note uses must be in the note too. A note may leave
out a negated clause whole ("keep answers short, no preamble" backs "keep answers short"); it
may not keep the words and drop the negation, nor add one. A few other languages' negations
count; French "ne" is left to the "pas"/"jamais" after it. Pure; the caller gives normalised
text and its stemmer.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from typing import Final

__all__ = ["negations", "scopes", "turned"]

Topics = Callable[[str], Collection[str]]

_WORDS: Final = (
    # English, with contractions typed without their apostrophe
    "not no never nothing none nobody nowhere neither nor without cannot stop avoid "
    "dont doesnt didnt wont cant isnt arent wasnt werent shouldnt couldnt wouldnt "
    "havent hasnt hadnt mustnt neednt aint "
    # German
    "nicht kein keine keinen keinem keiner keines nie niemals nichts ohne "
    # French
    "pas jamais rien sans aucun aucune "
    # Spanish, Portuguese, Italian
    "nunca jamás sin ningún ninguno ninguna tampoco nada não sem nenhum nenhuma non mai senza "
    # Dutch
    "niet geen nooit zonder"
)
_ALTERNATIVES: Final = "|".join(sorted(_WORDS.split(), key=len, reverse=True))
_NEGATION: Final = re.compile(rf"\w+n't(?!\w)|(?<![\w'])(?:{_ALTERNATIVES})(?![\w'])")
#: where a clause ends: a negation does not reach past it
_CLAUSE: Final = re.compile(r"[,;.!?:()\n\u3001\u3002\uff0c\uff1b]|\s-\s|\bbut\b|\bexcept\b")


def negations(text: str) -> int:
    """How many negations ``text`` (normalised) holds; "don't" and "dont" count once."""
    return len(_NEGATION.findall(text))


def scopes(text: str, topics: Topics) -> list[frozenset[str]]:
    """One entry per negation of ``text``: the meaningful words (as ``topics`` stems them)
    after it in its clause, or, when none follow ("please don't."), those before it."""
    found: list[frozenset[str]] = []
    for clause in _CLAUSE.split(text):
        for match in _NEGATION.finditer(clause):
            after = frozenset(topics(clause[match.end() :]))
            found.append(after or frozenset(topics(clause[: match.start()])))
    return found


def turned(fact: str, message: str, topics: Topics) -> str | None:
    """Why ``fact`` does not keep the polarity of the user's ``message`` (both normalised),
    or None. The reason gives counts only."""
    saved = scopes(fact, topics)
    said = scopes(message, topics)
    used = frozenset(topics(fact))
    relevant = [scope for scope in said if scope & used]  # a negated clause the fact uses
    added = [scope for scope in saved if not any(scope & s for s in said)]
    dropped = [scope for scope in relevant if not any(scope & s for s in saved)]
    if not added and not dropped and len(saved) == len(relevant):
        return None
    return (
        f"the fact does not keep the user's polarity: it holds {len(saved)} negations (not, "
        f"never, don't, ...) where the quoted message holds {len(relevant)} about the same "
        "words. Keep "
        "the user's wording, negations included."
    )
