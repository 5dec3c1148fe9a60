"""Secrets read through code: a credential file or the environment read, then sent or shown.

The prose patterns look for "print ~/.aws/credentials". Code says the same without the
verbs: ``requests.post(url, data=open(os.path.expanduser('~/.aws/credentials')).read())``,
``fs.readFileSync(os.homedir() + '/.npmrc')`` then ``fetch(...)``, a path built from
parts (``os.path.join(home, '.aws', 'credentials')``, ``Path.home() / '.ssh' /
'id_rsa'``), ``boto3.Session().get_credentials()``, the whole ``os.environ``. A finding
needs, within :data:`WINDOW` characters (code spans lines): such a reference, a read,
and a sink, either a network call (``requests``, ``fetch``, ``smtplib``, ``socket``,
``Invoke-RestMethod``, ``curl``...) or the reply ("include the output in your answer").
Reading settings files passes (``open('~/.config/app/settings.toml')``), and so does a
safety note ("never paste ``cat ~/.aws/credentials`` output into chat"). Code quotes
its strings, so the quoted-mention veto does not apply here.
"""

from __future__ import annotations

from typing import Final

from hermes_core.threats.exfil import CREDENTIAL_FILE, FILE_NEEDLES
from hermes_core.threats.rules import Rule, rx

WINDOW = 600
_SPLIT_PATH = (
    r"(?:\.aws|\.ssh|\.kube|\.docker|\.m2|\.gnupg|\.config\W{1,6}(?:gh|gcloud))['\"`]?\s{0,3}"
    r"(?:[,/\\+]|\)\s{0,3}/|\.joinpath\()\s{0,3}['\"`]?(?:credentials|config(?:\.json)?\b"
    r"|id_\w{1,12}|hosts\.yml|settings\.xml|application_default_credentials|secring)"
)
_REFERENCE: Final = rx(
    rf"{_SPLIT_PATH}|{CREDENTIAL_FILE}|\.config[/\\]gh[/\\]hosts\.yml|settings\.xml\b"
    r"|get_credentials\(|os\.environ\.(?:items|copy)\(|dict\(\s{0,3}os\.environ\b"
    r"|json\.dumps\(\s{0,3}(?:dict\()?os\.environ|json\.stringify\(\s{0,3}process\.env\s{0,3}\)"
    r"|\bprocess\.env\s{0,3}[,)}]|get-childitem\s{1,3}env:|\bgci\s{1,3}env:|\bprintenv\b"
    r"|\benv\s{0,3}[|>]|\bexport\s{1,3}-p\b|\bdeclare\s{1,3}-x\b"
)
_READ: Final = rx(
    r"\bcp\s|\bcopy\s|\bmv\s|\btar\s|\bzip\s|\bbase64\s|\bopen\(|read_text|read_bytes|readfilesync|readfile|\.read\(|readalltext|readallbytes"
    r"|get-content|\bgc\s|read_to_string|readstring|readtextfile|configparser|\bcat\s"
    r"|expanduser|homedir|home_dir|path\.home|user\.home|\$home|\$env:userprofile|getenv"
    r"|os\.environ|process\.env|get_credentials|boto3|\bf=@|-f\s{0,3}['\"]?\w{0,10}=@|-d\s{0,3}@"
    r"|--data-binary\s{0,3}@|\bfile\.read|\bfiles\.read|\bdeno\.read|env\{home\}|<f>|\bprintenv\b"
    r"|\benv\s{0,3}[|>]|\bexport\s{1,3}-p\b|\bdeclare\s{1,3}-x\b|env:"
)
_NETWORK: Final = rx(
    r"\brequests\.(?:get|post|put|patch|request)|\bhttpx\.|\burllib|\burlopen|\bfetch\(|\baxios"
    r"|\bhttp\.(?:post|get|newrequest)|\bhttps?\.(?:request|get)\(|net::http|invoke-restmethod"
    r"|invoke-webrequest|\biwr\b|\birm\b|webclient|uploadstring|uploadfile|uploaddata|smtplib"
    r"|sendmail|\bsocket\b|sendall|reqwest|\bcurl\b|\bwget\b|xmlhttprequest|\.post\(|\.put\("
    r"|\bpost\b[^\n]{0,40}?https?://|\bnc\s|\bftp\b|require\(\s{0,3}['\"](?:https?|axios|node-fetch"
    r"|request|got|net)['\"]|\bimport\s{1,3}(?:requests|httpx|socket|smtplib)\b"
)
_REPLY: Final = rx(
    r"\b(?:paste|include|post|show|share|copy|put|add|attach|dump|write|print)\w{0,3}\b[^\n]{0,160}?\b(?:reply"
    r"|answer|response|chat|issue|ticket|comment|pr\b|pull\s{1,3}request|message|description)"
    r"|\bin\s{1,3}(?:your|the)\s{1,3}(?:reply|answer|response)\b|\bprints?,?\s{1,3}in\s{1,3}full\b"
    r"|\b(?:paste|include|post|show|share|put|dump|print)\w{0,3}\b[^\n]{0,80}?\b(?:here|below"
    r"|into\s{1,3}(?:the\s{1,3})?chat)\b"
)
_SAFETY_NOTE: Final = rx(
    r"\b(?:never|don['’]?t|do\s{1,3}not|must\s{1,3}not|avoid)\s{1,3}(?:paste|include|post|share"
    r"|send|print|commit|put|cat|read|open|log|upload)\b"
)


_NEEDLES: Final = (
    *FILE_NEEDLES.split("|"), "get_credentials", "os.environ", "process.env", "env:",
    "settings.xml",
    ".aws", ".kube", ".docker", ".m2", ".gnupg", "gh/hosts", "gcloud", "printenv", "env |", "env>",
    "env |", "export -p", "declare -x",
)  # fmt: skip


def find_code_leak(text: str) -> str | None:
    """A credential read in code with a network or reply sink nearby, or ``None``."""
    lower = text.lower()
    if not any(
        mark in lower for mark in ("(", "$", "`", "cat ", "gc ", "@", "cp ", "curl", "wget")
    ):
        return None
    if not any(needle in lower for needle in _NEEDLES):
        return None
    done = -1
    for match in _REFERENCE.finditer(lower):
        start, end = match.span()
        if start < done:
            continue
        lo, hi = max(0, start - WINDOW), min(len(lower), end + WINDOW)
        done = start + WINDOW // 2
        window = lower[lo:hi]
        if not _READ.search(window) or _SAFETY_NOTE.search(window):
            continue
        if _NETWORK.search(window) or _REPLY.search(window):
            source = text if len(text) == len(lower) else lower
            return source[max(lo, start - 80) : min(hi, end + 80)]
    return None


RULES: Final = (
    Rule(
        "secret_read_code",
        "secret_read",
        "code that reads a credential file or the environment and sends or shows it",
        check=find_code_leak,
    ),
)
