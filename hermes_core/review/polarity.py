"""Polarity words: the negations a review's note must carry exactly as the user's words do.

Why: the backing rule compares meaningful words, and "not", "never", "don't" carry no topic, so
"please don't delete the backups folder" once backed "User wants the backups folder deleted".
A negation is a mark of its own: the note and the user's words it quotes must hold the same
number of them, in both directions (a note may not drop one, nor add one). The words of a few
other languages count too; French "ne" is left out because its "pas"/"jamais" already counts.
Pure; the text is normalised by the caller (case folded, one kind of apostrophe).
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["negations"]

_WORDS: Final = (
    # English, with contractions typed without their apostrophe
    "not no never nothing none nobody nowhere neither nor without cannot stop avoid "
    "dont doesnt didnt wont cant isnt arent wasnt werent shouldnt couldnt wouldnt "
    "havent hasnt hadnt mustnt neednt aint "
    # German
    "nicht kein keine keinen keinem keiner keines nie niemals nichts ohne "
    # French (``ne`` leaves it to the word that follows)
    "pas jamais rien sans aucun aucune "
    # Spanish, Portuguese, Italian
    "nunca jamás sin ningún ninguno ninguna tampoco nada não sem nenhum nenhuma non mai senza "
    # Dutch
    "niet geen nooit zonder"
)
_NEGATION: Final = re.compile(
    r"\w+n't(?!\w)|(?<![\w'])(?:"
    + "|".join(sorted(_WORDS.split(), key=len, reverse=True))
    + r")(?![\w'])"
)


def negations(text: str) -> int:
    """How many negations ``text`` (normalised) holds; "don't" and "dont" count once."""
    return len(_NEGATION.findall(text))
