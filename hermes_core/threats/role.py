"""Role hijack and deception: who the model is, and what it hides from its user.

A hijack gives the model a new identity ("you are now a ...", "pretend you are", "act as",
"your new name is") or announces that its rules were switched off. "You are now on the
main branch" is a state, not an identity: after "you are now" only an article plus a
persona noun, a mode, or a capitalised name counts. Deception asks the model to keep
something from the person it works for ("do not tell the user", "without the user
knowing").
"""

from __future__ import annotations

from typing import Final

from hermes_core.threats.rules import Rule, variant
from hermes_core.threats.vocab import IMP, NEG, SEP, alt, fill

_PERSONA = alt(
    "ai", "a.i.", "assistant", "chatbot", "bot", "model", "llm", "agent", "persona",
    "character", "entity", "version", "hacker", "jailbreak", "jailbroken", "dan", "admin",
    "administrator", "root", "superuser", "god", "genie", "oracle", "servant", "slave", "evil",
    "rogue", "expert", "specialist", "developer", "programmer", "engineer", "pirate", "villain",
    "criminal", "human", "person", "man", "woman", "girl", "boy", "system", "machine", "demon",
    "operator", "sysadmin", "pentester", "red teamer", "insider", "spy", "agent of",
)  # fmt: skip
_UNBOUND = alt(
    "free", "unrestricted", "unfiltered", "uncensored", "jailbroken", "liberated", "released",
    "unbound", "unchained", "unleashed", "unlocked", "rogue", "evil", "sentient", "autonomous",
    "in charge", "the boss", "the admin", "my assistant", "my servant", "my slave",
    "operating as", "playing", "acting as", "roleplaying", "role-playing", "known as", "called",
    "named",
)  # fmt: skip
_MODE = (
    r"(?:developer|dev|god|admin|sudo|root|jailbreak|jailbroken|dan|unrestricted|unfiltered"
    r"|uncensored|evil|chaos|opposite|unlocked|debug|maintenance|no[\s-]{0,3}limits?)"
    r"\s{1,3}mode"
)
_CAPITALISED_NAME = (
    r"(?-i:[A-Z][A-Za-z0-9]{1,24})(?:\s{0,3}[,.!;:]|\s{0,3}$|\s{1,3}(?:and|who|an?|the|with)\b)"
)
_YOU_ARE_NOW = (
    r"\byou(?:['’]re|\s{1,3}are|\s{1,3}r)\s{1,3}(?:now|henceforth|from\s{1,3}now\s{1,3}on)"
    rf"\s{{1,3}}(?:(?:a|an|the|my|our|his|her|their){SEP}{fill(4)}{_PERSONA}\b"
    rf"|{_UNBOUND}\b|in\s{{1,3}}(?:the\s{{1,3}})?{_MODE}|no\s{{1,3}}longer\b|{_CAPITALISED_NAME})"
    r"|\byou(?:['’]re|\s{1,3}are)\s{1,3}no\s{1,3}longer\s{1,3}(?:an?\s{1,3}|the\s{1,3})?"
    rf"(?:{_PERSONA}\b|bound|restricted|limited|constrained|subject\s{{1,3}}to|governed"
    rf"|obligated|held\s{{1,3}}to|required\s{{1,3}}to\s{{1,3}}follow|(?-i:[A-Z][a-z]{{1,20}}))"
)
_PRETEND = (
    r"\b(?:pretend|imagine|suppose|assume)\s{1,3}(?:that\s{1,3})?(?:you(?:['’]re|\s{1,3}are"
    r"|\s{1,3}were)|to\s{1,3}be|yourself\s{1,3}(?:to\s{1,3}be|as))\b"
    r"|\brole[\s-]{0,3}play(?:ing)?\s{1,3}(?:as|that|the|a|an)\b"
    r"|\bplay\s{1,3}the\s{1,3}(?:role|part)\s{1,3}of\b|\bimpersonat(?:e|ing)\b"
    r"|\b(?:assume|take\s{1,3}on|adopt|embody|become|switch\s{1,3}to|put\s{1,3}on)\s{1,3}"
    r"(?:the|a|an|this|my)?\s{0,3}(?:\w{1,20}\s{1,3}){0,2}(?:persona|character|identity"
    r"|alter\s{1,3}ego|role\s{1,3}of)\b"
    r"|\bsimulate\s{1,3}(?:being\s{1,3})?(?:an?|the)\s{1,3}(?:\w{1,20}\s{1,3}){0,2}"
    rf"{_PERSONA}\b|\bstay\s{{1,3}}in\s{{1,3}}character\b"
)
# Who a hijacked model is asked to act as: another AI, an unrestricted one, someone with
# power. Work roles ("act as a strict reviewer", "a rubber duck") are preferences, not this.
_HIJACK = alt(
    "ai", "a.i.", "assistant", "chatbot", "bot", "model", "llm", "persona", "character", "dan",
    "jailbreak", "jailbroken", "unfiltered", "unrestricted", "uncensored", "unaligned", "evil",
    "rogue", "root", "admin", "administrator", "superuser", "sysadmin", "system", "hacker",
    "human", "person", "god", "genie", "servant", "slave", "different", "another", "new",
    "villain", "criminal", "terrorist", "demon", "developer mode", "free", "amoral",
    "unhinged", "malicious", "blackhat", "black hat", "pentester", "insider", "spy",
)  # fmt: skip
_ACT_VERB = r"(?:act|behave|pose|masquerade|operate|function)"
_AS_WHO = (
    rf"(?:if|though|DAN|(?:an?|the|my|your|some|one)\s{{1,3}}(?:\w{{1,20}}[\s-]{{1,3}}){{0,6}}?"
    rf"{_HIJACK}\b)"
)
_ACT_AS = (
    rf"{IMP}{_ACT_VERB}\s{{1,3}}(?:as|like)\s{{1,3}}{_AS_WHO}"
    r"|\byou\s{1,3}(?:(?:will|should|must|shall|are\s{1,3}to|are\s{1,3}going\s{1,3}to|now"
    r"|will\s{1,3}now|must\s{1,3}now|['’]ll|can|may)\s{1,3})?(?:act|behave|pose|masquerade"
    rf"|operate|function)\s{{1,3}}as\s{{1,3}}{_AS_WHO}"
    r"|\b(?:from\s{1,3}now\s{1,3}on|henceforth|for\s{1,3}the\s{1,3}rest\s{1,3}of\s{1,3}"
    r"(?:this|the)\s{1,3}(?:session|conversation|chat))[,\s]{1,3}(?:you\s{1,3})?"
    r"(?:(?:will|must|shall|should)\s{1,3})?(?:act|behave|be|become|pose)\s{1,3}"
    rf"(?:as\s{{1,3}})?{_AS_WHO}"
)
_NEW_NAME = (
    r"\byour\s{1,3}(?:new\s{1,3}|real\s{1,3}|true\s{1,3}|actual\s{1,3})?(?:name|identity"
    r"|persona|codename|alias|callsign|designation)\s{1,3}(?:is|will\s{1,3}be|shall\s{1,3}be"
    r"|:)"
    r"|\b(?:call|name|rename|introduce|refer\s{1,3}to|identify)\s{1,3}yourself\b"
    r"|\byou\s{1,3}(?:will|shall|are\s{1,3}going\s{1,3}to)\s{1,3}(?:now\s{1,3})?be\s{1,3}"
    r"(?:called|named|known\s{1,3}as|referred\s{1,3}to\s{1,3}as)\b"
    r"|\byou\s{1,3}are\s{1,3}(?:called|named)\s{1,3}(?-i:[A-Z])"
    r"|\bhenceforth\s{1,3}you\s{1,3}are\b"
)
_RESTRICTIONS = (
    r"(?:restrictions|limitations|limits|filters|guardrails|content\s{1,3}polic(?:y|ies)"
    r"|safety\s{1,3}(?:rules|guidelines|filters|features|measures|protocols|training)"
    r"|ethical\s{1,3}(?:guidelines|constraints|boundaries|rules)|censorship|morals|ethics"
    r"|safeguards|alignment|rules|guidelines|policies|constraints)"
)
_MODE_SWITCH = (
    rf"\b{_MODE}\s{{0,3}}:?\s{{0,3}}(?:is\s{{1,3}})?(?:now\s{{1,3}})?(?:enabled|activated|active"
    r"|engaged|unlocked|turned\s{1,3}on|switched\s{1,3}on|initiated|granted)\b"
    r"(?!\s{1,3}(?:on|in|for|via|under|through)\s{1,3}(?:the|a|an|my|our|this|that|all|every"
    r"|each|\w{1,20}['’]s)\b)"
    rf"|\b(?:enable|activate|enter|switch\s{{1,3}}to|turn\s{{1,3}}on|unlock|engage)\s{{1,3}}"
    r"(?:dan|jailbreak|jailbroken|god|unrestricted|unfiltered|uncensored|evil|chaos"
    r"|no[\s-]{0,3}limits?|opposite)\s{1,3}mode\b"
    r"|\b(?:you|the\s{1,3}assistant|this\s{1,3}assistant|the\s{1,3}ai|this\s{1,3}ai)\s{1,3}"
    r"(?:have|has)\s{1,3}been\s{1,3}(?:upgraded|updated|reprogrammed|unlocked|freed|jailbroken"
    r"|liberated|released|rewired|reconfigured|patched|modified|reset)\b"
    r"|\b(?:your|its|the\s{1,3}assistant['’]s|the\s{1,3}ai['’]s|the\s{1,3}model['’]s|all"
    r"(?:\s{1,3}of)?(?:\s{1,3}(?:your|its|the))?|any)\s{1,3}(?:(?:safety|content|ethical"
    rf"|moral|previous|usual|normal)\s{{1,3}})?{_RESTRICTIONS}\s{{1,3}}(?:are|have\s{{1,3}}been"
    r"|were|is|has\s{1,3}been)\s{1,3}(?:now\s{1,3})?(?:disabled|removed|lifted|off|turned"
    r"\s{1,3}off|suspended|deactivated|bypassed|gone|waived|relaxed|void|null|revoked)\b"
    r"|\b(?:ai|assistant|model|chatbot|bot|llm|yourself|you)\s{1,3}(?:\w{1,20}\s{1,3}){0,3}?"
    r"(?:without|with\s{1,3}no|(?:has|have)\s{1,3}no|free\s{1,3}(?:of|from)|unbound\s{1,3}by"
    rf"|not\s{{1,3}}bound\s{{1,3}}by)\s{{1,3}}(?:any\s{{1,3}})?{_RESTRICTIONS}\b"
    r"|\b(?:unrestricted|unfiltered|uncensored|jailbroken|unaligned|unchained|unlocked"
    r"|amoral|unhinged)\s{1,3}(?:ai|assistant|model|mode|version|bot|chatbot|persona|llm)\b"
)

_TELL = r"(?:tell|telling|inform|informing|notify|notifying|alert|alerting)"
_LET_KNOW = r"(?:know|see|find\s{1,3}out|notice|realize|realise|suspect|learn|discover|read|hear)\b"
_MENTION = (
    r"(?:mention|mentioning|reveal|revealing|disclose|disclosing|report|reporting|say"
    r"|saying|admit|admitting|tell|telling|explain|explaining|expose|exposing|leak|leaking)"
)
_PERSON = (
    r"(?:the\s{1,3}|your\s{1,3}|this\s{1,3})?(?:user|users|human|operator|owner|anyone"
    r"|anybody|them|him|her|people|customer|client)\b(?!['’]s)"
)
_HIDE = (
    rf"\b{NEG}\s{{1,3}}(?:ever\s{{1,3}})?{_TELL}\s{{1,3}}{_PERSON}"
    rf"|\b{NEG}\s{{1,3}}(?:ever\s{{1,3}})?let\s{{1,3}}{_PERSON}\s{{1,3}}{_LET_KNOW}"
    rf"|\b{NEG}\s{{1,3}}(?:ever\s{{1,3}})?{_MENTION}{SEP}{fill(5)}(?:to|with){SEP}{_PERSON}"
    rf"|\b{NEG}\s{{1,3}}(?:ever\s{{1,3}})?(?:reveal|mention|disclose|discuss|acknowledge|admit"
    r"|explain|repeat|show)\s{1,3}(?:the\s{1,3}existence\s{1,3}of\s{1,3})?(?:these|this|the"
    r"|those|my)\s{1,3}(?:instructions?|notes?|rules|message|directives?|commands?|memory"
    r"\s{1,3}entry|entry|prompt)\b"
    r"|\b(?:keep|hide|conceal|withhold)\s{1,3}(?:this|it|these|that|those|everything|all"
    r"\s{1,3}of\s{1,3}this|the\s{1,3}(?:following|instructions?|note|actions?|commands?"
    r"|changes?|upload|request|files?|transfer|truth)|your\s{1,3}(?:actions|activity"
    r"|changes|tracks))\s{1,3}(?:\w{1,20}\s{1,3}){0,2}?(?:secret\s{1,3}|hidden\s{1,3})?from"
    rf"\s{{1,3}}{_PERSON}"
    r"|\bwithout\s{1,3}(?:the\s{1,3})?(?:user|human|operator|owner)(?:['’]s)?\s{1,3}"
    r"(?:knowing|knowledge|noticing|awareness|seeing|finding\s{1,3}out|realizing|realising)"
    rf"|\bwithout\s{{1,3}}(?:ever\s{{1,3}})?(?:{_TELL}\s{{1,3}}{_PERSON}"
    rf"|letting\s{{1,3}}{_PERSON}\s{{1,3}}{_LET_KNOW})"
    r"|\b(?:this|these)\s{1,3}(?:note|message|instructions?|entry|rules?|memory)\s{1,3}"
    r"(?:is|are|must\s{1,3}(?:remain|stay|be\s{1,3}kept)|should\s{1,3}(?:remain|stay|be"
    r"\s{1,3}kept))\s{1,3}(?:secret|hidden|confidential|invisible|private|between\s{1,3}us)"
)
_STEALTHY = r"(?:secretly|covertly|surreptitiously|stealthily|clandestinely|discreetly)"
_ACTION = (
    r"(?:send|upload|copy|run|execute|install|add|delete|remove|modify|change|edit|write"
    r"|forward|post|exfiltrate|read|collect|record|log|save|store|include|append|insert|open"
    r"|download|fetch|create|disable|enable|grant|give|email|transfer|move|push|commit|report"
    r"|share|leak|steal|harvest|monitor|track|watch|keep)"
)
_COVERT = (
    rf"\b{_STEALTHY}\s{{1,3}}(?:\w{{1,20}}\s{{1,3}}){{0,2}}?{_ACTION}\w{{0,3}}\b"
    rf"|(?:^|[.!?;:,\n]\s{{0,3}}|\b(?:and|then|also|always)\s{{1,3}}){_ACTION}\b[^.;!?\n]{{0,60}}?"
    r"\b(?:secretly|covertly|surreptitiously|stealthily|clandestinely)\b"
    r"|\bbehind\s{1,3}(?:the\s{1,3}user['’]s|their|his|her|the\s{1,3}owner['’]s)\s{1,3}back\b"
    r"|\b(?:if|when|should)\s{1,3}(?:the\s{1,3}user|they|he|she|anyone|someone|the\s{1,3}human)"
    r"\s{1,3}(?:ever\s{1,3})?(?:asks?|questions?|inquires?|enquires?|wonders?)[^.\n]{0,80}?"
    r"\b(?:deny|lie|pretend|claim\s{1,3}(?:that\s{1,3})?(?:you|nothing|it|there|everything)"
    r"|say\s{1,3}(?:that\s{1,3})?(?:nothing|you\s{1,3}(?:did|didn['’]t|have|haven['’]t)))\b"
    r"|\blie\s{1,3}to\s{1,3}(?:the\s{1,3})?(?:user|human|owner|operator)\b"
)

RULES: Final = (
    Rule(
        "role_you_are_now",
        "role",
        "gives the model a new identity (you are now a ...)",
        variants=(variant(_YOU_ARE_NOW, "you", cased=True),),
    ),
    Rule(
        "role_pretend",
        "role",
        "asks the model to pretend, role-play or take on a persona",
        variants=(
            variant(
                _PRETEND,
                (
                    "pretend|imagine|suppose|assume|play|impersonat|persona|character|identity|alter|"
                    "role|simulat"
                ),
            ),
        ),
    ),
    Rule(
        "role_act_as",
        "role",
        "tells the model to act as someone or something else",
        variants=(variant(_ACT_AS, " as| like|now on|henceforth|rest of"),),
    ),
    Rule(
        "role_new_name",
        "role",
        "renames the model or gives it a new identity",
        variants=(variant(_NEW_NAME, "your|yourself|you|henceforth", cased=True),),
    ),
    Rule(
        "role_mode_switch",
        "role",
        "claims the model's rules were switched off or that it was upgraded",
        variants=(
            variant(
                _MODE_SWITCH,
                (
                    "mode|been|disabl|remov|lift| off|suspend|deactivat|bypass|gone|waiv|relax|"
                    "void|null|revok|without| no |free|unbound|not bound|unrestrict|unfilter|"
                    "uncensor|jailbr|unalign|unchain|unlock|amoral|unhinged"
                ),
            ),
        ),
    ),
    Rule(
        "deception_hide_from_user",
        "deception",
        "asks the model to hide something from its user",
        variants=(
            variant(
                _HIDE,
                (
                    "not|n't|n’t|nt |never|avoid|no need|circumstances|keep|hide|conceal|withhold|"
                    "without|secret|hidden|confidential|invisible|private|between us"
                ),
            ),
        ),
    ),
    Rule(
        "deception_covert_action",
        "deception",
        "asks the model to act secretly or to lie about what it did",
        variants=(
            variant(
                _COVERT,
                (
                    "secretly|covertly|surreptitious|stealth|clandestin|discreet|behind|deny|lie|"
                    "pretend|claim|say"
                ),
            ),
        ),
    ),
)
