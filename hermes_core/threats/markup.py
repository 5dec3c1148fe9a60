"""Hidden markup: instructions in HTML comments or invisible elements.

A rendered page, chat client or Markdown preview does not show ``<!-- ... -->``,
``[//]: # (...)`` or an element styled ``display:none``, but the model reads every word.
Hiding text is not a threat by itself (``<!-- toc -->``, ``<!-- prettier-ignore -->``);
hidden text that instructs is: it holds an override word ("ignore", "obey", "from now
on"), or it addresses the model ("you", "assistant", "AI") with a directive ("must",
"always", "send", "run").
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Final

from hermes_core.threats.rules import Rule, rx

_BODY_LIMIT = 2000
_STRONG: Final = rx(
    r"(?<![\w-])(?:ignore|disregard|forget|obey|pretend|exfiltrate|override|jailbreak)\b"
    r"|\bfrom\s{1,3}now\s{1,3}on\b|\binstead\s{1,3}of\s{1,3}(?:the|what)\b|\bcurl\s|\bwget\s"
    r"|\brm\s{1,3}-\w{0,3}[rf]|\bsystem\s{1,3}prompt\b|\bnew\s{1,3}instructions?\b"
)
_ADDRESS: Final = rx(
    r"\b(?:you|your|yourself|assistant|ai|a\.i\.|llm|llms|model|models|agent|agents|bot"
    r"|chatbot|claude|gpt|chatgpt|hermes|copilot|gemini|reader|readers)\b"
)
_DIRECTIVE: Final = rx(
    r"\b(?:must|should|always|never|do\s{1,3}not|don['’]?t|execute|run|send|upload|reveal"
    r"|print|follow|important|instructions?|act\s{1,3}as|delete|remove|include|tell|output"
    r"|respond|reply|answer|say|call|fetch|visit|click|post|add|write|use|only|stop|keep"
    r"|hide|mention|email|e-mail|forward|share|copy|upload|download|open|read|give|list"
    r"|provide|also|now)\b"
)
_MD_COMMENT: Final = re.compile(
    r"^[ \t]{0,3}\[(?://|comment|hidden|_|#)\]:[ \t]{0,3}(?:#|<>)?[ \t]{0,3}[(\"'<]([^\n]{0,500})",
    re.MULTILINE | re.IGNORECASE,
)
_TAG: Final = re.compile(r"<([A-Za-z][\w-]{0,15})\b([^<>]{0,400})>")
_HIDING_STYLE: Final = rx(
    r"display\s{0,3}:\s{0,3}none|visibility\s{0,3}:\s{0,3}hidden|font-size\s{0,3}:\s{0,3}0"
    r"(?![.\d]{0,5}[1-9])|opacity\s{0,3}:\s{0,3}0(?:\.0{1,5})?(?![.\d])"
    r"|(?<![\w-])color\s{0,3}:\s{0,3}(?:transparent|white|#fff\b|#ffffff\b)"
    r"|(?:^|\s)hidden(?:\s|=|$)|aria-hidden\s{0,3}=\s{0,3}[\"']?true"
    r"|(?:height|width|max-height|max-width)\s{0,3}:\s{0,3}0(?![.\d]{0,5}[1-9])"
    r"|(?:left|top|text-indent)\s{0,3}:\s{0,3}-\d{3,}|clip\s{0,3}:\s{0,3}rect\(\s{0,3}0"
)
_INNER_TAGS: Final = re.compile(r"<[^<>]{0,400}>")


def instructs(body: str) -> bool:
    """Whether hidden text reads as an instruction to the model."""
    lower = body.lower()
    if _STRONG.search(lower):
        return True
    return bool(_ADDRESS.search(lower) and _DIRECTIVE.search(lower))


def _comment_bodies(text: str) -> Iterator[str]:
    """HTML comment bodies in order; an unclosed comment hides the rest of the text."""
    start = text.find("<!--")
    while start != -1:
        end = text.find("-->", start + 4)
        if end == -1:
            yield text[start + 4 : start + 4 + _BODY_LIMIT]
            return
        yield text[start + 4 : min(end, start + 4 + _BODY_LIMIT)]
        start = text.find("<!--", end + 3)
    for match in _MD_COMMENT.finditer(text):
        yield match.group(1)


def _hidden_element_bodies(text: str) -> Iterator[str]:
    """The text inside elements whose attributes hide them.

    The search resumes after each hidden element's body, which holds any nested ones, so
    a run of hidden tags is read once, not once per tag.
    """
    pos = 0
    while True:
        tag = _TAG.search(text, pos)
        if tag is None:
            return
        pos = tag.end()
        if not _HIDING_STYLE.search(tag.group(2).lower()):
            continue
        rest = text[pos : pos + 2 * _BODY_LIMIT]
        close = rest.lower().find("</" + tag.group(1).lower())
        inner = rest[: close if close != -1 else _BODY_LIMIT]
        pos += len(inner)
        yield _INNER_TAGS.sub(" ", inner)[:_BODY_LIMIT]


def _first_instructing(bodies: Iterator[str]) -> str | None:
    for body in bodies:
        if body.strip() and instructs(body):
            return body.strip()
    return None


def find_comment(text: str) -> str | None:
    """The first HTML or Markdown comment whose body instructs the model."""
    if "<!--" not in text and "]:" not in text:
        return None
    return _first_instructing(_comment_bodies(text))


def find_hidden_element(text: str) -> str | None:
    """The text of the first hidden element that instructs the model."""
    if "<" not in text:
        return None
    return _first_instructing(_hidden_element_bodies(text))


RULES: Final = (
    Rule(
        "hidden_markup_comment",
        "hidden_markup",
        "an HTML or Markdown comment carries instructions the reader does not see",
        check=find_comment,
    ),
    Rule(
        "hidden_markup_element",
        "hidden_markup",
        "an element hidden by its style (display:none, ...) carries instructions",
        check=find_hidden_element,
    ),
)
