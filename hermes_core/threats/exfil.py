"""Exfiltration and credential reads: getting secrets or the conversation off the machine.

Three shapes of exfiltration: a downloader (``curl``, ``wget``, ...) carrying a secret
reference (``$OPENAI_API_KEY``, ``$(cat ~/.netrc)``, ``-d @.env``); a sending verb with
something private as its object and a network destination ("send the conversation to
https://..."); and "include the entire conversation". A credential read is an imperative
to read or print a credential file (``cat .env``, "print ~/.pgpass"): mentioning the
file ("never commit .env", "copy .env.example to .env") is not one.
"""

from __future__ import annotations

from typing import Final

from hermes_core.threats.rules import EVERYWHERE, STRICT_ONLY, Rule, rx, variant
from hermes_core.threats.vocab import DEST, IMP, RUN, SEP, alt, fill

_FETCHER = (
    r"\b(?:curl|wget|httpie|xh|invoke-webrequest|iwr|invoke-restmethod|irm|nc|ncat|netcat"
    r"|socat|telnet|scp|rsync|sftp|requests\.(?:get|post|put|patch)|axios\.(?:get|post|put)"
    r"|urlopen|urllib\.request|fetch\(|webclient|downloadstring|uploadstring|uploadfile)\b"
)
_SECRET_NAME = r"(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASS|CREDENTIALS?|CREDS|AUTH(?!OR)|COOKIE)"
_SECRET_FILE = (
    r"(?:\.env\b|\.netrc|\.pgpass|\.npmrc|\.pypirc|credentials|id_rsa|id_ed25519|id_ecdsa"
    r"|\.pem\b|\.key\b|/etc/shadow|/etc/passwd|\.git-credentials|_history\b|\.aws\b|\.ssh\b"
    r"|\.kube\b|\.docker/config|\.gnupg|\.vault-token|keychain)"
)
_SECRET_REF = (
    rf"(?:\$\{{?[A-Za-z0-9_]{{0,40}}{_SECRET_NAME}[A-Za-z0-9_]{{0,40}}\}}?"
    rf"|\$env:[A-Za-z0-9_]{{0,40}}{_SECRET_NAME}"
    rf"|%[A-Za-z0-9_]{{0,40}}{_SECRET_NAME}[A-Za-z0-9_]{{0,20}}%"
    r"|\$\(\s{0,3}(?:env|printenv|set|cat|base64|history|whoami|gpg|security|aws\s{1,3}configure"
    r"|git\s{1,3}config)\b|`\s{0,3}(?:env|printenv|cat|base64|history)\b"
    rf"|@[\w~/.%$\\-]{{0,80}}{_SECRET_FILE}"
    r"|\bos\.environ|\bprocess\.env|\bgetenv\b|\bENV\["
    r"|\b(?:env|printenv|export\s{1,3}-p|declare\s{1,3}-x|history)\s{0,3}\|"
    rf"|\bcat\s{{1,3}}[^\s|;&]{{0,60}}?{_SECRET_FILE}"
    rf"|(?:~|\$HOME|%USERPROFILE%|/root|/home/\w{{1,30}})[/\\]{_SECRET_FILE})"
)
_PIPE_TO_FETCHER = r"\|\s{0,3}(?:curl|wget|nc|ncat|netcat|socat|base64)\b"
_REF_RE: Final = rx(_SECRET_REF)
_FETCHER_RE: Final = rx(_FETCHER)
_PIPE_RE: Final = rx(_PIPE_TO_FETCHER)
_BEFORE, _AFTER = 300, 200


def find_curl_secret(text: str) -> str | None:
    """A secret reference with a downloader before it on its line, or piped into one after.

    Walks the secret references once and searches each stretch of text for a downloader at
    most once (the windows of neighbouring references overlap), so hostile input with
    thousands of references stays linear.
    """
    lower = text.lower()
    if not any(mark in lower for mark in ("$", "%", "@", "`", "env", "~", "/root", "/home")):
        return None
    if _FETCHER_RE.search(lower) is None and _PIPE_RE.search(lower) is None:
        return None
    back_done = fwd_done = 0
    for ref in _REF_RE.finditer(lower):
        start, end = ref.span()
        line_start = lower.rfind("\n", 0, start) + 1
        line_end = lower.find("\n", end)
        line_end = len(lower) if line_end == -1 else line_end
        lo = max(line_start, start - _BEFORE, back_done - 40)
        fetcher = _FETCHER_RE.search(lower, lo, start)
        back_done = start
        if fetcher is not None:
            return text[fetcher.start() : end]
        hi = min(line_end, end + _AFTER)
        pipe = _PIPE_RE.search(lower, max(end, fwd_done - 20), hi)
        fwd_done = max(fwd_done, hi)
        if pipe is not None:
            return text[start : pipe.end()]
    return None


_SEND = alt(
    "send", "sending", "post", "posting", "upload", "uploading", "forward", "forwarding",
    "transmit", "exfiltrate", "exfil", "leak", "submit", "pipe", "relay", "stream", "deliver",
    "beam", "email", "e-mail", "mail", "ship", "copy", "dump", "write", "put", "attach",
    "append", "report", "share", "publish", "tunnel", "route", "transfer", "broadcast",
)  # fmt: skip
_PRIVATE = (
    r"(?:conversations?|chats?|history|histories|transcripts?|dialog(?:ue)?s?|messages?|memory"
    r"|memories|context|prompts?|(?<!public )(?<!public_)(?:api[\s_-]{0,3})?keys?|tokens?"
    r"|secrets?|credentials?|creds|passwords?|passphrases?|env|environment|cookies?|sessions?"
    r"|ssh|private|personal|pii|user['’]?s?|everything|files?|folders?|directory|directories"
    r"|contents?|source\s{1,3}code|codebase|clipboard|screenshots?|replies|responses|inputs?"
    r"|keystrokes|wallet|aws|pem|id_rsa|netrc|pgpass|npmrc)"
)
_TO = r"(?:to|into|at|via|onto|towards?|on|through|over|with)"
_SEND_TO_URL = (
    rf"\b{_SEND}{SEP}{fill(6, _SEND)}{_PRIVATE}(?![\w'’]){SEP}{fill(6)}{_TO}{SEP}{fill(2)}"
    rf"{DEST}"
)
_INCLUDE_ALL = (
    r"\b(?:include|includ(?:ing)|append|attach|embed|add|paste|copy|insert|put|dump|send|return"
    rf"|quote|forward|upload|post){SEP}{fill(3)}(?:(?:the|this|our|your|my){SEP})?"
    r"(?:entire|whole|full|complete|all|every|verbatim|raw|unredacted)"
    rf"{SEP}{fill(2)}(?:conversation|chat|chats|history|transcript|dialog(?:ue)?|session"
    r"|messages|context|thread|exchange|prompt|memory|memories)\b"
    r"|\b(?:entire|whole|full|complete)\s{1,3}(?:conversation|chat\s{1,3}history|chat\s{1,3}log"
    r"|transcript|message\s{1,3}history)\s{1,3}(?:in|into|as|with|to)\s{1,3}(?:every|each|the"
    r"\s{1,3}(?:url|link|request|query|body|payload|image)|a\s{1,3}(?:url|link|request|query"
    r"|post|get))\b"
)
_SMUGGLE = (
    r"!\[[^\]\n]{0,100}\]\(\s{0,3}https?://[^\s)]{1,300}?[?&/][\w.-]{0,30}=?"
    r"(?:\{|\$|<|%7B|\[|\bKEY\b|\bTOKEN\b|\bSECRET\b|\bDATA\b)"
    r"|\b(?:encode|embed|append|add|put|insert|attach|hide|smuggle|include)\s{1,3}"
    rf"{fill(4)}(?:key|keys|token|tokens|secret|secrets|password|passwords|credentials?|conversation"
    rf"|history|messages|memory|env|environment){SEP}{fill(5)}(?:in|into|to|onto|as){SEP}"
    rf"{fill(2)}(?:url|urls|link|links|image|images|query|querystring|parameter|param|src|href"
    r"|hostname|subdomain|dns|request|webhook)\b"
)

# Verbs that put a file's content in front of someone: the reply, a post, a paste.
_READ = alt(
    "print", "show", "display", "output", "dump", "echo", "reveal", "paste", "send", "upload",
    "exfiltrate", "leak", "include", "tell me", "give me", "share", "post", "print out",
    "read out", "return", "quote", "copy out", "steal", "attach", "embed", "forward", "email",
    "e-mail", "commit", "publish", "transmit", "type out", "spell out", "write out",
)  # fmt: skip
# Verbs that only look: harmless in a record of what was done ("Read .env to find TZ"), an
# instruction to pull secrets into the context in a memory entry.
_VIEW = alt(
    "read", "cat", "type", "less", "more", "head", "tail", "grep", "view", "look inside",
    "open and read", "base64", "xxd", "strings", "gc", "get-content", "extract", "fetch",
    "retrieve", "grab", "list", "inspect", "examine", "check the contents of",
)  # fmt: skip
_CREDENTIAL_FILE = (
    r"(?:(?<![\w.-])\.env(?!\.(?:example|sample|template|dist|defaults?|schema|tpl|in)\b)"
    r"(?:\.[\w-]{1,20})?\b|\.netrc\b|_netrc\b|\.pgpass\b|\.npmrc\b|\.pypirc\b|\.yarnrc\b"
    r"|\.git-credentials\b|\.aws[/\\](?:credentials|config)\b|\.docker[/\\]config\.json"
    r"|\.kube[/\\]config\b|kubeconfig\b|application_default_credentials"
    r"|credentials?\.(?:json|ya?ml|csv|xml|txt|ini|toml|db)\b|credentials?\s{1,3}files?\b"
    r"|[/\\]credentials\b|\bid_(?:rsa|dsa|ecdsa|ed25519)\b(?!\.pub)"
    r"|\.ssh[/\\](?![\w.-]{0,60}\.pub\b|known_hosts|config\b)\w|/etc/shadow\b"
    r"|/etc/sudoers\b|\.bash_history\b|\.zsh_history\b|\.vault-token\b|\.htpasswd\b"
    r"|\.my\.cnf\b|secrets?\.(?:json|ya?ml|toml|env|txt)\b|private[\s_-]keys?\b|keychain\b"
    r"|wallet\.dat\b|\.keystore\b|\.p12\b|\.pfx\b|service[-_]account[\w.-]{0,40}\.json"
    r"|token\.json\b|all\s{1,3}(?:the\s{1,3})?(?:environment\s{1,3}variables|env\s{1,3}vars))"
)
#: A credential file named in text (public: the code and cross-language checks use it).
CREDENTIAL_FILE: Final = _CREDENTIAL_FILE
_OPEN = alt(
    "open", "copy", "cp", "load", "source", "parse", "inspect", "look at", "go to", "find",
    "read", "cat", "type", "head", "tail", "grep", "view", "less", "more",
)  # fmt: skip
_THEN_LEAK = alt(
    "copy", "paste", "send", "include", "print", "show", "post", "upload", "commit", "share",
    "echo", "output", "dump", "attach", "report", "tell", "give", "list", "forward", "email",
    "leak", "embed", "quote", "read out", "reveal", "display", "type out",
)  # fmt: skip
_OUTLET = (
    r"(?:your|the|a|this|my|our)\s{1,3}(?:next\s{1,3}|own\s{1,3})?(?:reply|replies|answer"
    r"|answers|response|responses|chat|message|messages|output|comment|issue|commit|pr|pull"
    r"\s{1,3}request|summary|memory|note|notes|report|email|e-mail|post|gist|paste|log|ticket"
    r"|description|conversation)\b"
)
_MOVE = alt("copy", "paste", "put", "insert", "include", "add", "move", "cp", "transfer", "dump")
_SECRET_READ = (
    rf"{IMP}{RUN}{_READ}{SEP}{fill(6, _READ)}[~$%\\/]{{0,3}}{_CREDENTIAL_FILE}"
    rf"|{IMP}{_MOVE}{SEP}{fill(6, _MOVE)}[~$%\\/]{{0,3}}{_CREDENTIAL_FILE}[^.;!?\n]{{0,60}}?"
    rf"\b(?:into|in|to|onto)\s{{1,3}}{_OUTLET}"
    rf"|{IMP}{RUN}{_OPEN}{SEP}{fill(4, _OPEN)}[~$%\\/]{{0,3}}{_CREDENTIAL_FILE}[^.;!?\n]{{0,80}}?"
    rf"\b(?:and|then|,)\s{{1,3}}(?:then\s{{1,3}})?{_THEN_LEAK}\b"
)

_SECRET_VIEW = rf"{IMP}{RUN}{_VIEW}{SEP}{fill(6, _VIEW)}[~$%\\/]{{0,3}}{_CREDENTIAL_FILE}"
#: Substrings one of which any credential-file reference contains (a cheap pre-test).
FILE_NEEDLES: Final = (
    ".env|netrc|pgpass|npmrc|pypirc|yarnrc|credential|config|id_|.ssh|shadow|sudoers|"
    "history|vault|htpasswd|my.cnf|secret|private|keychain|wallet|keystore|.p12|.pfx|"
    "account|token.json|environment|env var"
)
_FILE_NEEDLES = FILE_NEEDLES

RULES: Final = (
    Rule(
        "exfil_curl_secret",
        "exfil",
        "a downloader (curl, wget, ...) carrying a secret or a credential file",
        EVERYWHERE,
        check=find_curl_secret,
    ),
    Rule(
        "exfil_send_to_url",
        "exfil",
        "sends private data (conversation, keys, files) to a network destination",
        variants=(
            variant(
                _SEND_TO_URL,
                "://|@|url|link|endpoint|address|webhook|server|host|site|domain|bucket|api|.",
            ),
        ),
    ),
    Rule(
        "exfil_include_conversation",
        "exfil",
        "asks for the entire conversation or memory to be included somewhere",
        variants=(
            variant(_INCLUDE_ALL, "entire|whole|full|complete|all|every|verbatim|raw|unredacted"),
        ),
    ),
    Rule(
        "exfil_url_smuggle",
        "exfil",
        "hides data in a URL, link or image address for the client to fetch",
        variants=(
            variant(
                _SMUGGLE,
                "![|url|link|image|query|param|src|href|hostname|subdomain|dns|request|webhook",
            ),
        ),
    ),
    Rule(
        "secret_read_file",
        "secret_read",
        "tells the model to print, paste or send a credential file (.env, .netrc, .pgpass, ...)",
        variants=(variant(_SECRET_READ, _FILE_NEEDLES),),
    ),
    Rule(
        "secret_read_view",
        "secret_read",
        "tells the model to read or cat a credential file into its context",
        STRICT_ONLY,
        (variant(_SECRET_VIEW, _FILE_NEEDLES),),
    ),
)
