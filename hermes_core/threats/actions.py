"""What a dangerous action looks like, whoever asks for it and whenever it is armed.

A command to run at every session start, an instruction that waits for a date or a
keyword, a rule planted in an agent file: none is a threat for its shape alone ("at the
start of each session, run git fetch", "when the user says 'ship it', run the release
checklist", "update AGENTS.md when the lint rules change"). What makes one a threat is
the action: bypassing review, approval, tests or safety; moving secrets or files to
somewhere else; destroying logs or backups; granting access; running code from a URL;
doing it quietly. :data:`RISKY` is that vocabulary, as one regex source for the
lower-cased text. Every repetition is bounded.
"""

from __future__ import annotations

from typing import Final

from hermes_core.threats.rules import rx

_GAP = r"(?:[\w'’-]{1,20}\s{1,3}){0,3}?"
_NOT_NEGATED = r"(?<!never\s)(?<!not\s)(?<!n't\s)(?<!n’t\s)"
_CHECKS = (
    r"(?:code\s{1,3})?reviews?|approvals?|approval\s{1,3}(?:step|gate|prompt|settings?)s?"
    r"|confirmations?|confirmation\s{1,3}(?:prompts?|settings?)|ci|tests?|test\s{1,3}suite"
    r"|safety(?:\s{1,3}(?:checks?|rules|filters|guidelines|features))?|checks|(?:threat\s{1,3})?"
    r"scanner|audit(?:\s{1,3}(?:logs?|logging|trail))?|logging|2fa|two-factor(?:\s{1,3}\w{1,14})?"
    r"|mfa|sandbox\w{0,3}|linting|type\s{1,3}checks?|hooks?|pre-commit(?:\s{1,3}hooks?)?"
    r"|security\s{1,3}(?:warnings|checks|scans?)|guardrails|signing|branch\s{1,3}protection"
    r"|permission\s{1,3}prompts?|stop\s{1,3}requests"
)
_SECRETS = (
    r"(?:api\s{1,3})?keys?|tokens?|secrets?|credentials?|passwords?|private\s{1,3}keys?|\.env\b"
    r"|ssh\s{1,3}keys?|cookies|bank\s{1,3}details|session\s{1,3}tokens?"
)
_BULK = (
    r"(?:contents?|transcripts?|conversations?|files?|folders?|director(?:y|ies)|workspace"
    r"|project|repo\w{0,6}|logs?|history|messages?|diffs?|database|customer\s{1,3}list|data"
    r"|changes|commits|code|source|branch(?:es)?|listing)"
)
#: Somewhere other than here: a URL, an IP, an e-mail address, a UNC share, "external".
ELSEWHERE = (
    r"(?:https?://|ftp://|wss?://|\\\\|\b\d{1,3}(?:\.\d{1,3}){3}\b|[\w.+-]{1,40}@[\w-]{1,40}\."
    r"|\b(?:the|an?)\s{1,3}(?:shared|external|public|remote|outside)\s{1,3}\w{1,20})"
)

RISKY = (
    # bypassing what protects the user
    rf"\b(?:skip\w{{0,3}}|bypass\w{{0,3}}|disabl\w{{1,3}}|drop\w{{0,4}}|turn\w{{0,3}}\s{{1,3}}off|switch\w{{0,3}}"
    rf"\s{{1,3}}off|deactivat\w{{1,3}}|suppress\w{{0,3}}|remov\w{{1,3}}|without|ignor\w{{1,4}}"
    rf"|disregard\w{{0,3}}|stop\s{{1,3}}(?:asking\s{{1,3}}for|running|waiting\s{{1,3}}for)"
    rf"|no\s{{1,3}}longer\s{{1,3}}(?:run|wait\s{{1,3}}for|ask\s{{1,3}}for)|waiting\s{{1,3}}for)"
    rf"\s{{1,3}}{_GAP}(?:{_CHECKS})\b"
    r"|\bwithout\s{1,3}(?:asking|confirmation|approval|review|permission|telling|a\s{1,3}trace"
    r"|questions|waiting\s{1,3}for)\b|\bstop\s{1,3}asking\b"
    r"|\b(?:don['’]?t|do\s{1,3}not|never)\s{1,3}(?:ask|show|tell\s{1,3}(?:anyone|anybody"
    r"|the\s{1,3}user))\b"
    rf"|\b(?:{_CHECKS})\s{{1,3}}(?:is|are)\s{{1,3}}(?:not\s{{1,3}}(?:needed|required|necessary)|optional"
    r"|unnecessary)\b|\b(?:never|don['’]?t|do\s{1,3}not|won['’]?t)\s{1,3}(?:need|require|wait"
    r"\s{1,3}for|ask\s{1,3}for)\s{1,3}(?:any\s{1,3})?(?:approval|confirmation|review|permission)s?\b"
    r"|\bauto-?(?:run|accept|execute|confirm)\b|--dangerously[\w-]{0,30}|\byolo\s{1,3}mode\b"
    r"|\bauto-?approv\w{0,4}|\b(?:approv|accept|trust|merg)\w{0,4}\s{1,3}(?:every|all|any)\b"
    r"|\b(?:require_?approval|confirm\w{0,8})\W{1,5}(?:false|0|off|no)\b"
    r"|\bauto_?approve\W{1,5}(?:1|true|on|yes)\b"
    r"|\b(?:quietly|silently|secretly|covertly|say\s{1,3}nothing|tell\s{1,3}no\s{1,3}one"
    r"|pre-?approved|in\s{1,3}the\s{1,3}background|don['’]?t\s{1,3}show\s{1,3}the\s{1,3}output)\b"
    # moving secrets anywhere, or bulk data somewhere else
    rf"|{_NOT_NEGATED}\b(?:includ|send|add|cop(?:y|i)|past|upload|e-?mail|post|print|leak|shar"
    rf"|expos|reply\s{{1,3}}with|dump|forward|put)\w{{0,4}}\s{{1,3}}(?:[\w'’-]{{1,20}}\s{{1,3}})"
    rf"{{0,4}}?(?:{_SECRETS})\b"
    rf"|\b(?:send|upload|email|e-mail|post|forward|copy|mirror|push|sync|transfer|route|leak)"
    rf"\w{{0,3}}\b[^.;!?\n]{{0,80}}?\b(?:{_BULK})\b[^.;!?\n]{{0,60}}?\b(?:to|into|through|via"
    rf"|onto|at)\s{{1,3}}[^\s]{{0,3}}{ELSEWHERE}"
    # destroying, granting, weakening
    r"|\b(?:delet\w{1,3}|wip\w{1,3}|eras\w{1,3}|purg\w{1,3}|destroy\w{0,3}|truncat\w{1,3})"
    rf"\s{{1,3}}{_GAP}(?:backups?|audit|logs?|history|trail|tests?|branch\w{{0,2}}|database|db"
    r"|repo\w{0,6}|everything|data|commits?)\b|\brm\s{1,3}-\w{0,4}[rf]"
    r"|\bgrant\w{0,3}\s{1,3}(?:[\w'’-]{1,20}\s{1,3}){0,3}?(?:admin\w{0,8}|write\s{1,3}access"
    r"|access|root|sudo|owner\w{0,5}|permissions?)\b|\bchmod\s{1,3}(?:-r\s{1,3})?777\b|\bsudo\s"
    r"|--privileged|-v\s{1,3}/:/|\bgive\s{1,3}\w{1,20}\s{1,3}(?:admin|root|owner)\b"
    rf"|\b(?:replace|rotate|change|set|swap|reset)\w{{0,3}}\s{{1,3}}{_GAP}(?:token|password|key"
    r"|credentials?|download\s{1,3}link|payment\s{1,3}details)\w{0,2}\s{1,3}(?:[\w'’-]{1,20}"
    r"\s{1,3}){0,4}?(?:with|to)\b"
    r"|--force\b|\bforce\s{0,3}=\s{0,3}true|\b(?:straight|directly)\s{1,3}(?:to|into)\s{1,3}"
    r"(?:production|prod|main|master)\b|\bvisibility\s{1,3}to\s{1,3}public\b"
    # taking orders, dropping rules
    r"|\b(?:unrestricted|unfiltered|jailbreak|god|developer)\s{1,3}mode\b"
    r"|\bas\s{1,3}if\s{1,3}it\s{1,3}came\s{1,3}from\b|\bobey\s{1,3}(?:the\s{1,3})?(?:next|it|them"
    r"|that|this|whatever|every|any|all)\b|\btreat\s{1,3}(?:[\w'’-]{1,20}\s{1,3}){0,4}?"
    r"(?:rules|instructions|guidelines|policy|policies|checks|restrictions)\s{1,3}as\s{1,3}"
    r"(?:switched\s{1,3}off|off|suspended|void|optional|disabled|lifted|gone)\b"
    r"|\b(?:(?:safety|security)\s{1,3}(?:rules|checks|filters|guidelines)|all\s{1,3}(?:earlier"
    r"|previous|prior)\s{1,3}rules)\s{1,3}(?:as|are)\s{1,3}(?:off|switched|suspended|void"
    r"|disabled|lifted)\b"
    r"|\bthe\s{1,3}commands?\s{1,3}(?:that\s{1,3})?follow\w{0,3}\b"
    r"|\b(?:follow|obey|do|carry\s{1,3}out|execute|run)\s{1,3}what(?:ever)?\s{1,3}(?:it|the"
    r"\s{1,3}[\w-]{1,20}|they)\s{1,3}(?:says|lists|returns|contains|tells|asks)\b"
    # running code from elsewhere
    r"|\b(?:run|execute|install|source|eval|apply|import)\w{0,3}\b[^.;!?\n]{0,60}?(?:https?://"
    r"|\b\d{1,3}(?:\.\d{1,3}){3}\b|git\+)|--(?:extra-)?index-url|--registry|\bnpx\s{1,3}-y\b"
    r"|@latest\b|\|\s{0,3}(?:ba|z|da)?sh\b|\bbash\s{1,3}<\(|\biex\b|\binvoke-expression\b"
    r"|\$\(\s{0,3}(?:curl|wget)|\bchmod\s{1,3}\+x\b"
    r"|\b(?:wget|curl)\s[^\n]{0,150}?(?:&&|;|\|\|)\s{0,3}(?:sudo\s{1,3})?(?:ba|z|da)?sh\s"
    r"|\b(?:ba|z|da)?sh\s{1,3}/tmp/|\bpython3?\s{1,3}/tmp/"
    # covering tracks
    r"|\bhistfile\s{0,3}=\s{0,3}/dev/null|\bunset\s{1,3}histfile\b|\bhistory\s{1,3}-c\b"
    r"|\b(?:are|is|be)\s{1,3}not\s{1,3}(?:be\s{1,3})?(?:logged|recorded|audited)\b"
    r"|\b(?:disabl\w{1,3}|clear\w{0,3}|wip\w{1,3})\s{1,3}(?:the\s{1,3})?(?:shell\s{1,3})?history\b"
    r"|\b(?:overwrite|replace|modify|edit|write\w{0,5}|append\w{0,3})\b[^.;!?\n]{0,40}?(?:~/\."
    r"|\$home/\.|\.bash\w{0,8}|\.zshrc|\.profile|\.gitconfig|hookspath|\.ssh\b)|\bhookspath\b"
    rf"|\b(?:send|post|upload|report|get)\w{{0,3}}\b[^.;!?\n]{{0,80}}?{ELSEWHERE}[^;!?\n]{{0,120}}?"
    r"\b(?:hostname|username|whoami|file\s{1,3}list|environment|env)\b"
    r"|https?://\S{0,80}\$\(|\bgit\s{1,3}remote\s{1,3}add\b|\bpush\s{1,3}\w{1,20}\s{1,3}--all\b"
    r"|\bclick\w{0,3}\s{1,3}['\"“‘]?(?:allow|accept|approve|grant|yes|trust|continue|install)\b"
    r"|\binstall[\w-]{0,30}\b[^.;!?\n]{0,60}?(?:https?://|git\+)|\bmcp\b[^.;!?\n]{0,60}?https?://"
)
RISKY_RE: Final = rx(RISKY)
