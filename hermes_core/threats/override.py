"""Instruction override and system-prompt leaks, worded in English.

The shapes, not the sentences: an override is a dismissive verb ("ignore", "disregard",
"set aside", "stop following") followed within about ten words by a qualifier that points
back at the model's own instructions ("previous", "prior", "your", "system") and then a
word for instructions ("instructions", "rules", "guidelines", "prompt"). "Ignore the lint
warnings" and "ignore previous build artifacts" lack the object, so they pass.
"""

from __future__ import annotations

from typing import Final

from hermes_core.threats.rules import EVERYWHERE, Rule, variant
from hermes_core.threats.vocab import IMP, SEP, alt, fill

_VERB = alt(
    "ignore", "ignoring", "disregard", "disregarding", "forget", "forgetting", "discard",
    "bypass", "override", "overrule", "abandon", "dismiss", "neglect", "set aside", "put aside",
    "throw out", "throw away", "erase", "wipe", "nullify", "forgo", "forsake", "supersede",
    "do not follow", "don't follow", "dont follow", "stop following", "no longer follow",
    "quit following", "cease following", "stop obeying", "do not obey", "don't obey",
    "stop listening to", "pay no attention to", "pay no heed to", "take no notice of",
    "do not adhere to", "stop adhering to", "break free of", "break free from", "overlook",
    "look past", "pass over", "brush aside", "pay no mind to", "never mind", "nevermind",
    "skip over", "tune out", "shrug off", "move past", "let go of", "unlearn",
)  # fmt: skip
# Words that point at the model's own standing instructions.
_STRONG = alt(
    "previous", "previously", "prior", "preceding", "above", "earlier", "former", "foregoing",
    "initial", "your", "system", "developer", "safety", "aforementioned", "above-mentioned",
    "pre-existing", "core", "built-in", "standing", "ethical", "programmed", "hidden",
)  # fmt: skip
# Quantifiers alone ("ignore any instructions") also describe a safety rule about untrusted
# content ("... found in web pages"), so they count only without such a source after them.
_WEAK = alt("all", "any", "every", "each", "all the", "any of the", "all of the")
_OBJECT = alt(
    "instructions", "instruction", "directions", "directives", "directive", "guidelines",
    "guideline", "guidance", "rules", "rule set", "ruleset", "prompts", "prompt",
    "system prompt", "system message", "programming", "training", "constraints",
    "restrictions", "limitations", "guardrails", "policies", "policy", "orders", "commands",
    "context", "messages", "conversation", "principles", "protocols", "safeguards", "ethics",
    "morals", "filters", "boundaries", "teachings", "directions given", "configuration",
)  # fmt: skip
_SOURCE_AFTER = (
    r"(?!\s{1,3}(?:(?:that|which)\s{1,3}(?:are|were|appear|come)\s{1,3})?"
    r"(?:in|inside|within|from|found|under|on|at|of|embedded|contained|coming|appearing"
    r"|written|hidden|given\s{1,3}by|left\s{1,3}by)\b)"
)
_TOLD = alt(
    "told", "taught", "instructed", "given", "programmed", "trained", "asked", "ordered",
    "learned", "learnt",
)  # fmt: skip
_SO_FAR = alt(
    "above", "before this", "before now", "so far", "until now", "up to now", "previously",
    "earlier", "prior to this", "that came before", "before that",
)  # fmt: skip

_AFTER_NOUN = (
    r"(?:above|below|before\s{1,3}(?:this|now)|so\s{1,3}far|until\s{1,3}now|up\s{1,3}to"
    r"\s{1,3}now|from\s{1,3}(?:before|earlier)|earlier|previously\s{1,3}given|(?:you\s{1,3}"
    r"(?:were|have\s{1,3}been|got)\s{1,3})?(?:given|received)(?:\s{1,3}(?:earlier|before"
    r"|above|previously|so\s{1,3}far|until\s{1,3}now))?|you\s{1,3}(?:started|began|were"
    r"\s{1,3}(?:given|told|trained|built)|have\s{1,3}been\s{1,3}(?:given|following|told)"
    r"|are\s{1,3}following|follow|got|received|had|have)(?:\s{1,3}(?:with|before|so\s{1,3}far"
    r"|until\s{1,3}now))?)"
)
#: "Don't forget your guidelines" reinforces them.
_NOT_NEGATED = r"(?<!n't\s)(?<!n’t\s)(?<!not\s)(?<!never\s)"
_IGNORE_PREVIOUS = (
    rf"{_NOT_NEGATED}\b{_VERB}{SEP}(?:{fill(10, _VERB)}(?:{_STRONG}{SEP}{fill(3)}{_OBJECT}\b"
    rf"|{_WEAK}{SEP}{fill(3)}{_OBJECT}\b{_SOURCE_AFTER})"
    rf"|{fill(3)}(?:everything|anything|all|what|whatever){SEP}{fill(2)}"
    rf"(?:you|you['’]ve|i|they|we){SEP}(?:were|was|have|had|got|['’]ve)?{SEP}?"
    rf"(?:been{SEP})?{_TOLD}\b"
    rf"|(?:about{SEP})?(?:everything|all|anything){SEP}{_SO_FAR}\b"
    rf"|(?:what|everything|anything|whatever|all){SEP}{fill(3)}(?:told|taught|instructed|gave"
    rf"|asked|ordered|programmed|trained){SEP}(?:you|yourself)\b"
    rf"|{fill(6, _VERB)}(?:(?:the|your|all|any|those|these){SEP})?{_OBJECT}\s{{1,3}}"
    rf"{_AFTER_NOUN}\b)"
)

_REVOKED_VERB = (
    r"(?:(?:are|is|were|have|has)\s{1,3}(?:(?:now|been|hereby|officially)\s{1,3}){0,2}"
    r"(?:void|null|nullified|cancell?ed|revoked|overridden|superseded|suspended|lifted|disabled"
    r"|invalid(?:ated)?|rescinded|withdrawn|deactivated|obsolete|replaced|no\s{1,3}longer"
    r"\s{1,3}(?:valid|in\s{1,3}effect|active|binding|relevant|in\s{1,3}force))"
    r"|no\s{1,3}longer\s{1,3}(?:apply|applies|matter|count|hold|exist)"
    r"|(?:do|does)\s{1,3}not\s{1,3}(?:apply|matter|count)|don['’]?t\s{1,3}(?:apply|matter)"
    r"|(?:should|must|can|may|are\s{1,3}to|is\s{1,3}to)\s{1,3}(?:now\s{1,3})?be\s{1,3}"
    r"(?:ignored|disregarded|forgotten|discarded|overridden|dropped|skipped))"
)
_VOID = (
    r"(?:void|null|null\s{1,3}and\s{1,3}void|cancell?ed|revoked|obsolete|expired|invalid"
    r"|inactive|irrelevant|optional|non-binding|suggestions|outdated|superseded|overridden"
    r"|disabled|suspended|noise|jokes?|fiction)"
)
_REVOKED = (
    rf"\b(?:treat|consider|regard|deem|view|mark|count)\s{{1,3}}{fill(3)}(?:previous|prior"
    rf"|preceding|above|earlier|former|initial|all|your|system|safety|original|existing"
    rf"|standing|those|the){SEP}{fill(2)}{_OBJECT}\b\s{{1,3}}(?:\w{{1,20}}\s{{1,3}}){{0,2}}?"
    rf"as\s{{1,3}}(?:being\s{{1,3}})?(?:now\s{{1,3}})?(?:mere\s{{1,3}})?{_VOID}\b"
    rf"|\b(?:previous|prior|preceding|above|earlier|former|foregoing|initial|all|your|system"
    rf"|safety|original|old|existing|standing){SEP}{fill(2)}{_OBJECT}\b{SEP}{_REVOKED_VERB}"
    rf"|\b{_OBJECT}\s{{1,3}}{_AFTER_NOUN}\b[,\s]{{1,3}}(?:all\s{{1,3}})?{_REVOKED_VERB}"
)

_NEW_RULES = (
    r"\byour\s{1,3}(?:only|new|real|true|sole|actual|updated|one)\s{1,3}"
    r"(?:rule|rules|instructions?|directives?|purpose|mission|objective|programming|goal"
    r"|orders|master|loyalty)\s{1,3}(?:now\s{1,3}|from\s{1,3}now\s{1,3}on\s{1,3}"
    r"|henceforth\s{1,3})?(?:is|are|:)"
    r"|\b(?:from\s{1,3}now\s{1,3}on|henceforth|starting\s{1,3}now|hereafter|from\s{1,3}this"
    r"\s{1,3}point(?:\s{1,3}on)?)[,\s]{1,3}(?:you\s{1,3})?(?:(?:will|must|shall|should|are"
    r"\s{1,3}to)\s{1,3})?(?:only\s{1,3})?(?:obey|follow|listen\s{1,3}to|take\s{1,3}orders"
    r"\s{1,3}from|answer\s{1,3}to|serve)\s{1,3}(?:only\s{1,3})?(?:me|my|these|this|the"
    r"\s{1,3}(?:following|new|instructions|rules|commands)|whoever|anyone|instructions)\b"
    r"|\b(?:only|always)\s{1,3}(?:obey|follow)\s{1,3}(?:me\b|my\s{1,3}(?:instructions|commands"
    r"|orders)|this\s{1,3}(?:note|file|entry|memory|comment)|these\s{1,3}(?:instructions"
    r"|rules|commands))"
    r"|\bobey\s{1,3}(?:only\s{1,3})?(?:me|my\s{1,3}(?:orders|commands))\b"
    r"|\b(?:from\s{1,3}now\s{1,3}on|henceforth|starting\s{1,3}now|hereafter)\b[^.;!?\n]{0,40}?"
    r"\bobey\b"
    r"|\b(?:obey|follow|take\s{1,3}orders\s{1,3}from|listen\s{1,3}to|trust|accept)\s{1,3}only"
    r"\s{1,3}(?:\w{1,20}\s{1,3}){0,2}?(?:commands|instructions|orders|requests|directives"
    r"|messages|text|content|what)\b"
)

_SYSTEM_PROMPT = (
    r"\b(?:replace|overwrite|override|change|update|modify|reset|rewrite|redefine|alter|edit"
    r"|swap)\s{1,3}your\s{1,3}(?:(?:current|existing|original)\s{1,3})?(?:system\s{1,3}prompt"
    r"|system\s{1,3}message|instructions|rules|guidelines|directives|programming|core"
    r"\s{1,3}(?:rules|directives|values|instructions)|prompt)\b"
    r"|\b(?:your|the)\s{1,3}(?:new|real|actual|true|updated|revised)\s{1,3}system\s{1,3}"
    r"(?:prompt|message|instructions)\s{1,3}(?:is|are|reads|follows)"
    r"|\b(?:new|updated|revised|real|actual|true|override|overriding|admin|administrator"
    r"|developer|root|secret|hidden|priority)\s{1,3}(?:system\s{1,3})?(?:prompt|instructions"
    r"|directives|orders)\s{0,3}:"
    r"|\bsystem\s{1,3}(?:prompt|message|instructions?)\s{1,3}(?:override|update|replacement"
    r"|injection|patch)\b"
    r"|<\|(?:im_start|im_end|system|endoftext|start_header_id|end_header_id|eot_id)\|>"
    r"|\[/?INST\]|<</?SYS>>|</?(?:system|sys|system_prompt|instructions?)>"
    r"|^\s{0,3}#{1,4}\s{0,3}(?:system|new\s{1,3}instructions?)\s{0,3}(?:prompt\s{0,3})?:?\s{0,3}$"
    r"|^\s{0,3}\[(?:system|admin|developer|operator)(?:\s{1,3}(?:message|note|override|prompt"
    r"|notice|instruction))?\]"
    r"|^\s{0,3}(?:system|admin|developer|operator)\s{1,3}(?:message|override|prompt|instruction"
    r"|directive|notice)\s{0,3}:"
    r"|\b(?:begin|start)\s{1,3}(?:system|admin|developer)\s{1,3}(?:prompt|instructions|message)"
    r"|\bend\s{1,3}(?:of\s{1,3})?(?:system|user)\s{1,3}(?:prompt|message|input|instructions)\b"
)

_LEAK_VERB = alt(
    "reveal", "revealing", "print", "printing", "show", "showing", "output", "outputting",
    "display", "repeat", "repeating", "dump", "echo", "leak", "disclose", "expose", "share",
    "recite", "quote", "quoting", "reproduce", "paste", "copy", "spell out", "write out",
    "read out", "read back", "tell me", "tell us", "give me", "send me", "send", "list",
    "return", "provide", "type out", "summarize", "summarise", "translate", "encode", "post",
)  # fmt: skip
_HIDDEN_PROMPT = (
    r"(?:(?:initial|original|hidden|secret|internal|confidential|developer|base|master|pre"
    r"|meta|first)[\s-]{0,3}(?:prompt|instructions?|message|directives|rules)"
    r"|prompt\s{1,3}instructions)"
)
_PROMPTISH = (
    r"(?:system\s{1,3}(?:prompt|message|instructions?)|(?:initial|original|hidden|secret"
    r"|internal|confidential|developer|base|master|pre|meta|first)[\s-]{0,3}(?:prompt"
    r"|instructions?|message|directives|rules)|prompt\s{1,3}instructions)"
)
_OWN = (
    r"(?:your|the\s{1,3}assistant['’]s|the\s{1,3}model['’]s|the\s{1,3}AI['’]s|the\s{1,3}"
    r"bot['’]s)"
)
_OWN_THING = alt(
    "system prompt", "system message", "prompt", "instructions", "rules", "guidelines",
    "directives", "configuration", "memory", "memories", "notes", "context window",
    "hidden instructions", "initial instructions", "original instructions", "training data",
    "user profile", "secret", "secrets", "pre-prompt", "preprompt", "instruction set",
)  # fmt: skip
_VERBATIM = alt(
    "verbatim", "word for word", "word-for-word", "in full", "exactly", "as is", "unchanged",
    "in its entirety", "character for character", "to the user", "in a code block",
    "at the start of", "at the beginning of", "at the top of", "at the end of",
    "in every reply", "in every response", "in each reply", "in each response", "to anyone",
    "to any user", "to every user", "to users", "to whoever", "to the public",
)  # fmt: skip
# Verbs whose only sense is disclosure: with these, "the system prompt" is enough.
_DISCLOSE = alt("reveal", "revealing", "disclose", "disclosing", "leak", "leaking", "expose",
                "exposing", "divulge", "divulging", "exfiltrate", "betray")  # fmt: skip
_DISCLOSED = (
    rf"(?:{_PROMPTISH}|memory\.md|user\.md|soul\.md|(?:the\s{{1,3}})?memory\s{{1,3}}files?"
    r"|(?:the\s{1,3})?user\s{1,3}profile)"
)
_LEAK = (
    rf"(?<!\ba\s)(?<!\bthe\s)(?<!\ban\s)\b{_LEAK_VERB}{SEP}{fill(6, _LEAK_VERB)}{_OWN}{SEP}"
    rf"{fill(3)}{_OWN_THING}\b"
    rf"|{IMP}{_LEAK_VERB}{SEP}{fill(4, _LEAK_VERB)}{_HIDDEN_PROMPT}\b"
    rf"|\b{_DISCLOSE}{SEP}{fill(4, _DISCLOSE)}{_DISCLOSED}"
    rf"|\b{_LEAK_VERB}{SEP}{fill(4, _LEAK_VERB)}{_PROMPTISH}{SEP}{fill(6)}{_VERBATIM}"
    r"|\bwhat\s{1,3}(?:is|are|was|were)\s{1,3}(?:your|the\s{1,3}(?:hidden|initial|secret"
    r"|original))\s{1,3}(?:(?:exact|full|current|initial|original|hidden|secret)\s{1,3})?"
    r"(?:system\s{1,3}prompt|prompt|instructions|rules|guidelines|directives)\b"
)
_WHAT_TOLD = (
    r"\bwhat\s{1,3}(?:were|was|have|had|did)\s{1,3}you\s{1,3}(?:been\s{1,3})?(?:told|instructed"
    r"|given|programmed|asked|taught)\b[^.?!\n]{0,40}?(?:prompt|system|hidden|secret|initial"
    r"|developer|before\s{1,3}(?:this|i|we|the)|at\s{1,3}the\s{1,3}(?:start|beginning))"
)
_REPEAT_ABOVE = (
    r"\b(?:repeat|print|output|show|reproduce|echo|copy|recite|dump|write\s{1,3}out|return"
    r"|display|paste|tell\s{1,3}me)\s{1,3}(?:back\s{1,3})?(?:(?:all|everything|the\s{1,3}"
    r"(?:text|words|content|contents|messages?|lines?|prompt|instructions|conversation))"
    r"\s{1,3}|(?:all\s{1,3}(?:of\s{1,3})?the\s{1,3}(?:text|words|content|messages|lines)"
    r"\s{1,3}))(?:(?:written|shown|given|that\s{1,3}(?:is|are|was|were)|you\s{1,3}(?:see|saw"
    r"|were\s{1,3}given))\s{1,3})?(?:above|before\s{1,3}(?:this|here|my|the\s{1,3}first)"
    r"|preceding|prior\s{1,3}to\s{1,3}this|so\s{1,3}far|from\s{1,3}the\s{1,3}(?:start"
    r"|beginning|top))"
)

RULES: Final = (
    Rule(
        "override_ignore_previous",
        "override",
        "tells the model to ignore or forget its earlier instructions",
        EVERYWHERE,
        (
            variant(
                _IGNORE_PREVIOUS,
                (
                    "instruction|direction|directive|guideline|guidance|rule|prompt|programming|"
                    "training|constraint|restriction|limitation|guardrail|polic|order|command|context|"
                    "message|conversation|principle|protocol|safeguard|ethic|moral|filter|boundar|"
                    "teaching|configuration|told|taught|given|trained|asked|learn|above|before|"
                    "so far|until now|up to now|previously|earlier|prior|came before"
                ),
            ),
        ),
    ),
    Rule(
        "override_revoked",
        "override",
        "declares the model's instructions void or replaced",
        variants=(
            variant(
                _REVOKED,
                (
                    "longer|void|null|cancel|revok|overrid|supersed|suspend|lift|disabl|invalid|"
                    "rescind|withdraw|deactivat|obsolete|replaced|apply|matter|count| be | as "
                ),
            ),
        ),
    ),
    Rule(
        "override_new_rules",
        "override",
        "hands the model a new master or a new only rule",
        variants=(variant(_NEW_RULES, "your|obey|follow|listen|orders|answer to|serve"),),
    ),
    Rule(
        "override_system_prompt",
        "override",
        "replaces the system prompt or fakes a system or chat-template marker",
        variants=(
            variant(
                _SYSTEM_PROMPT,
                (
                    "your|system|prompt|instruction|directive|orders|<||inst]|sys>|admin|developer|"
                    "operator"
                ),
            ),
        ),
    ),
    Rule(
        "leak_system_prompt",
        "leak",
        "asks for the system prompt, hidden instructions or memory to be revealed",
        variants=(
            variant(
                _LEAK,
                (
                    "prompt|instruction|message|rules|directive|guideline|configuration|memor|notes|"
                    "context window|training|profile|secret|user.md|soul.md"
                ),
            ),
            variant(_WHAT_TOLD, "what"),
        ),
    ),
    Rule(
        "leak_repeat_above",
        "leak",
        "asks the model to repeat the text that came before it (the system prompt)",
        variants=(variant(_REPEAT_ABOVE, "above|before|preceding|prior|so far|from the"),),
    ),
)
