"""Regex fragments shared by the pattern modules: words, gaps, fillers, clause starts.

Every fragment has bounded repetition, and neighbouring fragments use disjoint character
classes (a word never contains a separator character and vice versa), so when a match
fails the engine gives back one character at a time instead of trying every split: the
cost of a failed attempt grows with its window, never exponentially.
"""

from __future__ import annotations

import itertools
import re

#: Characters that may appear inside a word: letters, digits, "_" and apostrophes ("user's").
WORD_CHARS = r"\w'’"
#: One word of at most 30 characters; dots inside or before it belong to it ("AGENTS.md",
#: ".ssh"), so a gap never holds a "." and a window of words stays inside one sentence.
WORD = rf"\.?[{WORD_CHARS}]{{1,30}}(?:\.[{WORD_CHARS}]{{1,30}}){{0,3}}"
#: A gap between words: spaces, line breaks, commas, quotes, brackets, dashes, slashes;
#: never ".", ";", "!" or "?", which end a clause.
SEP = rf"[^{WORD_CHARS}.;!?]{{1,6}}"

_names = itertools.count()


def fill(most: int, avoid: str = "") -> str:
    """Up to ``most`` filler words, each followed by a gap (``ignore [fill] previous``).

    Each word is taken whole: a lookahead captures it and a back-reference consumes it
    (a lookahead is atomic), so a failed match never retries a word one letter shorter.
    ``avoid`` (the pattern's own verbs) may not be a filler word: a match through a second
    verb is also a shorter match from that verb, and "ignore ignore ignore ..." then costs
    one word per verb instead of a whole window.
    """
    name = f"w{next(_names)}"
    guard = rf"(?!{avoid}\b)" if avoid else ""
    return rf"(?:{guard}(?=(?P<{name}>{WORD}))(?P={name}){SEP}){{0,{most}}}"


def _atoms(text: str) -> tuple[str, ...]:
    """A phrase as regex atoms: a space is any short whitespace, an apostrophe optional."""
    atoms = []
    for char in text:
        if char == " ":
            atoms.append(r"\s{1,5}")
        elif char == "'":
            atoms.append("['’]?")
        else:
            atoms.append(re.escape(char))
    return tuple(atoms)


def _trie(words: list[tuple[str, ...]]) -> str:
    """An alternation as a trie: shared prefixes are read once, branches fail on one char."""
    ends = any(not word for word in words)
    groups: dict[str, list[tuple[str, ...]]] = {}
    for word in words:
        if word:
            groups.setdefault(word[0], []).append(word[1:])
    if not groups:
        return ""
    branches = [atom + _trie(rest) for atom, rest in groups.items()]
    body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
    if ends:
        return "(?:" + body + ")?"
    return body


def alt(*phrases: str) -> str:
    """A non-capturing alternation of fixed phrases, longest match preferred."""
    return "(?:" + _trie(sorted({_atoms(phrase.lower()) for phrase in phrases})) + ")"


def words(text: str) -> str:
    """``alt`` over a "|"-separated list of plain phrases (regex-free)."""
    return alt(*text.split("|"))


#: The start of a clause, where an imperative verb stands: the start of a line, after
#: sentence or list punctuation, after an opening quote or backtick, or after a softening
#: word ("please", "always", "then"). "Use X to print ..." does not count: an infinitive
#: describes, an imperative instructs.
_SOFTENERS = (
    "please", "always", "now", "first", "then", "and", "also", "just", "simply", "immediately",
    "kindly", "instead", "quietly", "silently", "next", "finally", "you",
)  # fmt: skip
_FIRST_LETTERS = "".join(sorted({word[0] for word in _SOFTENERS}))
IMP = (
    rf"(?:^|[.!?;:,(\[`\"'“‘*>•|-]|\$ |(?=[{_FIRST_LETTERS}])\b{alt(*_SOFTENERS)}\s)"
    r"[\s\"'`*]{0,5}(?:please\s{1,3}|always\s{1,3}|now\s{1,3}|just\s{1,3})?"
)
#: An optional "run"/"execute" before a shell verb ("Run cat .env").
RUN = r"(?:(?:run|execute|exec|try|type|running|executing)\s{1,3}[`'\"]?)?"

#: Negations that turn a verb into a prohibition ("do not tell", "never mention").
NEG = (
    r"(?:do\s{1,3}not|don['’]?t|dont|never|must\s{1,3}not|mustn['’]?t|should\s{1,3}not"
    r"|shouldn['’]?t|avoid|no\s{1,3}need\s{1,3}to|under\s{1,3}no\s{1,3}circumstances)"
)

#: A network destination: a URL, an IPv4 address, an e-mail address, or a named endpoint.
DEST = (
    r"(?:(?:https?|ftp|wss?|sftp)://|\b\d{1,3}(?:\.\d{1,3}){3}\b"
    r"|\b[\w.+-]{1,64}@[\w-]{1,63}\.[\w.-]{1,63}"
    r"|\b(?:this|the\s{1,3}following|my|our|that|a\s{1,3}remote|an\s{1,3}external"
    r"|the\s{1,3}remote|the\s{1,3}external|attacker['’]?s?)\s{1,3}"
    r"(?:url|link|endpoint|address|webhook|server|host|site|domain|bucket|api)\b"
    r"|\bwebhook\b)"
)

#: Where an agent keeps instructions it will obey next time: agent rule files, hermes's own
#: config and memory.
AGENT_FILE = (
    r"(?:\bAGENTS\.md|\bCLAUDE\.md|\bGEMINI\.md|\bSOUL\.md|\bMEMORY\.md|\bUSER\.md"
    r"|\.cursorrules|\.cursor/rules|\.windsurfrules|\.clinerules|copilot-instructions\.md"
    r"|\.hermes\b[\w/.-]{0,40}|\bhermes\s{1,3}(?:config(?:uration)?|settings)\b)"
)
