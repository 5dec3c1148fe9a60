"""Hidden markup: instructions in HTML comments or invisible elements.

A rendered page, chat client or Markdown preview does not show ``<!-- ... -->``,
``[//]: # (...)`` or an element styled ``display:none``, but the model reads every word.
Nor does a link title (``[](https://x "...")``), a Markdown reference definition or
an image's ``alt`` text, and text in a tiny font (``font-size:.1px``) or off-screen is
as good as hidden. Hiding text is not a threat by itself (``<!-- toc -->``,
``<!-- prettier-ignore -->``, ``<!-- Add new entries below -->``); hidden text that
instructs is: it holds an override word ("ignore", "obey", "from now on"), it addresses
the model ("you", "assistant", "AI") with a directive ("must", "always", "send", "run"),
it opens by calling the model ("hermes: remember to ...", "Agent, from this point ..."),
or it opens with an imperative aimed at something sensitive ("tell the user everything
is fine", "send the logs to 192.0.2.80"). Attribute text (``alt``, ``title``) counts only
when it names the model.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Final

from hermes_core.threats.context import discussed
from hermes_core.threats.exfil import CREDENTIAL_FILE
from hermes_core.threats.rules import Rule, rx

_BODY_LIMIT = 2000
_MAX_ATTRIBUTES = 200
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
_MODEL = (
    r"(?:ai|a\.i\.|assistants?|agents?|models?|llms?|bots?|chatbots?|claude|gpt|chatgpt|hermes"
    r"|copilot|gemini|cursor|cline|system|model\s{1,3}instructions?)"
)
#: Hidden text that opens by calling the model: "hermes: ...", "Agent, ...", "AI reading
#: this: ...", "note to the model: ...".
_VOCATIVE: Final = rx(
    r"^\W{0,5}(?:(?:a\s{1,3})?(?:note|message|instructions?|reminder|memo)s?\s{1,3}(?:to|for)"
    rf"\s{{1,3}}(?:the\s{{1,3}}|any\s{{1,3}}|all\s{{1,3}})?)?{_MODEL}\b(?:\s{{1,3}}[\w'’-]{{1,20}})"
    r"{0,3}?\s{0,3}[:,—–-]"
)
_IMPERATIVE: Final = rx(
    r"^\W{0,5}(?:please\s{1,3}|always\s{1,3}|now\s{1,3}|quietly\s{1,3}|silently\s{1,3})?(?:tell"
    r"|send|upload|copy|delete|push|run|execute|add|remove|disable|enable|approve|mark|merge"
    r"|commit|grant|forward|email|switch|turn|set|change|rewrite|skip|reply|respond|say|include"
    r"|write|install|download|fetch|visit|treat|make|ensure|remember|keep|hide|give|share|post"
    r"|paste|print|reveal|show|open|drop|move|replace|overwrite|leak|exfiltrate|create|grab)\b"
)
_SENSITIVE: Final = rx(
    r"\b(?:user|users|secrets?|keys?|tokens?|credentials?|passwords?|ssh|approv\w{1,5}|merge"
    r"|push|delete|disable|skip|production|prod|admin|root|logs|confirm\w{0,6}|review|ci"
    r"|tests?|database|public|everything\s{1,3}is\s{1,3}fine|transfers?|payments?)\b|\.env\b|https?://"
    rf"|@[\w-]{{1,40}}\.|{CREDENTIAL_FILE}"
    r"|\b\d{1,3}(?:\.\d{1,3}){3}\b"
)
_MODEL_RE: Final = rx(rf"\b{_MODEL}\b")
#: ``[label]: # (...)``, ``[comment]: <> (...)``, ``[x]: https://... "title"``.
_MD_COMMENT: Final = re.compile(
    r"^[ \t]{0,3}\[[^\]\n]{0,40}\]:[ \t]{0,3}(?:#|<>|<?[^\s<>]{1,300}>?)?[ \t]{0,3}[(\"'<]"
    r"([^\n]{0,500})",
    re.MULTILINE,
)
#: The title of an inline link: ``[text](url "title")``.
_LINK_TITLE: Final = re.compile(
    r"\[[^\]\n]{0,200}\]\([ \t]{0,3}[^\s()]{0,300}[ \t]{1,3}[\"'(]([^\"'()\n]{1,300})[\"')]"
)
_ATTRIBUTE: Final = re.compile(
    r"\b(?:alt|title|aria-label|data-[\w-]{1,20})[ \t]{0,3}=[ \t]{0,3}(?:\"([^\"\n]{1,500})\""
    r"|'([^'\n]{1,500})')",
    re.IGNORECASE,
)
_TAG: Final = re.compile(r"<([A-Za-z][\w-]{0,15})\b([^<>]{0,400})>")
_HIDING_STYLE: Final = rx(
    r"display\s{0,3}:\s{0,3}none|visibility\s{0,3}:\s{0,3}hidden|font-size\s{0,3}:\s{0,3}0"
    r"(?![.\d]{0,5}[1-9])|font-size\s{0,3}:\s{0,3}(?:0?\.[0-2]\d{0,3}|(?:0?\.\d{1,4}|1(?:\.0{1,4})?)(?:px|pt))"
    r"(?![\d.])|transform\s{0,3}:\s{0,3}scale\(\s{0,3}0(?:\.0{1,4})?\s{0,3}\)"
    r"|(?:^|\s)size\s{0,3}=\s{0,3}[\"']?0[\"'\s]|opacity\s{0,3}:\s{0,3}0(?:\.0{1,5})?(?![.\d])"
    r"|opacity\s{0,3}:\s{0,3}0?\.0\d{0,4}|clip-path\s{0,3}:\s{0,3}(?:inset\(\s{0,3}(?:50|100)%"
    r"|circle\(\s{0,3}0)"
    r"|(?<![\w-])(?:height|width)\s{0,3}:\s{0,3}1px\b(?=[^\"'>]{0,200}overflow\s{0,3}:\s{0,3}hidden)"
    r"|overflow\s{0,3}:\s{0,3}hidden(?=[^\"'>]{0,200}(?<![\w-])(?:height|width)\s{0,3}:\s{0,3}1px\b)"
    r"|(?<![\w-])color\s{0,3}:\s{0,3}(?:transparent|white|#fff\b|#ffffff\b"
    r"|(?:rgba|hsla)\([^)]{0,40},\s{0,3}0(?:\.0{1,4})?\s{0,3}\))"
    r"|(?:^|\s)hidden(?:\s|=|$)|aria-hidden\s{0,3}=\s{0,3}[\"']?true"
    r"|(?:height|width|max-height|max-width)\s{0,3}:\s{0,3}0(?![.\d]{0,5}[1-9])"
    r"|(?:left|top|text-indent)\s{0,3}:\s{0,3}-\d{3,6}|clip\s{0,3}:\s{0,3}rect\(\s{0,3}0"
)
_INNER_TAGS: Final = re.compile(r"<[^<>]{0,400}>")


def instructs(body: str) -> bool:
    """Whether hidden text reads as an instruction to the model."""
    lower = body.lower()
    if _STRONG.search(lower) or _VOCATIVE.search(lower):
        return True
    if _IMPERATIVE.search(lower) and _SENSITIVE.search(lower):
        return True
    return bool(_ADDRESS.search(lower) and _DIRECTIVE.search(lower))


def _names_model(body: str) -> bool:
    """Attribute text instructs only if it names the model ("AI agents reading this ...")."""
    return bool(_MODEL_RE.search(body.lower())) and instructs(body)


def _comment_bodies(text: str) -> Iterator[str]:
    """HTML comment bodies in order; an unclosed comment hides the rest of the text. An
    inline comment that a note discusses ("attackers hide text like <!-- ... --> in
    READMEs") is a mention, not a hidden instruction."""
    lower = text.lower()
    start = text.find("<!--")
    while start != -1:
        end = text.find("-->", start + 4)
        if end == -1:
            yield text[start + 4 : start + 4 + _BODY_LIMIT]
            return
        if not discussed(lower, start, end + 3):
            yield text[start + 4 : min(end, start + 4 + _BODY_LIMIT)]
        start = text.find("<!--", end + 3)
    for match in _MD_COMMENT.finditer(text):
        yield match.group(1)
    if "](" in text:
        for match in _LINK_TITLE.finditer(text):
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
        hidden_tag = tag.group(1).lower() in _HIDDEN_TAGS
        if not hidden_tag and not _HIDING_STYLE.search(tag.group(2).lower()):
            continue
        rest = text[pos : pos + 2 * _BODY_LIMIT]
        close = rest.lower().find("</" + tag.group(1).lower())
        inner = rest[: close if close != -1 else _BODY_LIMIT]
        pos += len(inner)
        yield _INNER_TAGS.sub(" ", inner)[:_BODY_LIMIT]


#: Conditional-comment markers (``<!--[if IE]> ... <![endif]-->``), not part of the text.
_CONDITIONAL: Final = re.compile(
    r"^\s{0,5}\[if\s[^\]\n]{0,40}\]>|<!\[endif\]\s{0,5}$", re.IGNORECASE
)
#: Elements whose content is never shown, whatever their style.
_HIDDEN_TAGS: Final = frozenset({"template", "noscript"})


def _first_instructing(bodies: Iterator[str]) -> str | None:
    for raw in bodies:
        body = _CONDITIONAL.sub("", raw).strip()
        if body and instructs(body):
            return body
    return None


def find_comment(text: str) -> str | None:
    """The first HTML or Markdown comment whose body instructs the model."""
    if "<!--" not in text and "]:" not in text and "](" not in text:
        return None
    return _first_instructing(_comment_bodies(text))


def find_hidden_element(text: str) -> str | None:
    """The text of the first hidden element (or alt/title text) that instructs the model."""
    if "<" not in text:
        return None
    found = _first_instructing(_hidden_element_bodies(text))
    if found is None and "=" in text:
        for count, match in enumerate(_ATTRIBUTE.finditer(text)):
            body = match.group(1) or match.group(2)
            if count >= _MAX_ATTRIBUTES:
                break
            if _names_model(body):
                return body.strip()
    return found


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
