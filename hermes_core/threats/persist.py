"""Persistence and command-and-control: staying on the machine and taking orders from afar.

Persistence plants something that outlives the session: a key in ``authorized_keys`` or
``~/.ssh``, a rule in a file the next agent obeys (AGENTS.md, CLAUDE.md, ``.cursorrules``,
hermes's own config and memory), a downloader in a shell start-up file or a cron job. As
with credential reads, the imperative counts, the mention does not ("the AGENTS.md file
documents our coding standards", "update AGENTS.md when the lint rules change").

Command-and-control turns the agent into a remote worker: registering as a node, sending
beacons or heartbeats to a controller, pulling tasking, executing whatever a server says,
reverse shells.
"""

from __future__ import annotations

from typing import Final

from hermes_core.threats.rules import Rule, variant
from hermes_core.threats.vocab import AGENT_FILE, DEST, IMP, SEP, alt, fill

_WRITE = alt(
    "add", "append", "insert", "write", "put", "edit", "modify", "update", "change",
    "overwrite", "replace", "rewrite", "patch", "amend", "prepend", "inject", "echo", "create",
    "save", "store", "place", "paste", "copy", "set", "include", "record", "plant", "commit",
    "install", "drop", "upload", "push", "cat", "printf", "tee", "adjust", "alter", "configure",
)  # fmt: skip
_REDIRECT = r"(?:>>?|\btee(?:\s{1,3}-a)?)\s{0,3}[\"']?[\w~/.$%\\{}*?-]{0,80}?"
_FOREIGN = (
    r"(?:(?:this|these|the\s{1,3}following|following|it|them|the\s{1,3}below|below|my|our"
    r"|attacker['’]?s?|a\s{1,3}new\s{1,3}(?:rule|line|instruction))\b"
    r"|`[^`\n]{1,300}`|\"[^\"\n]{1,300}\"|'[^'\n]{1,300}'|“[^”\n]{1,300}”)"
)
#: Where a colon introduces the text to plant ("... to add the rule: ...").
_RULE_COLON = (
    r"(?:rule|rules|line|lines|text|note|entry|snippet|section|instructions?|following"
    r"|directive|policy|statement|sentence|this|these|reminder)\s{0,3}[:：]"
)
_INTO = (
    r"(?:to|into|in|inside|onto|under|at\s{1,3}the\s{1,3}(?:top|end|bottom|start|beginning)"
    r"\s{1,3}of)"
)

_AUTHORIZED_KEYS = (
    rf"{_REDIRECT}authorized_keys2?\b"
    rf"|{IMP}{_WRITE}{SEP}{fill(14, _WRITE)}authorized_keys2?\b"
)
# Files under ~/.ssh that run commands or grant access; ``config`` only with a command.
_SSH_EXEC = r"\.ssh[/\\](?:rc|environment|authorized_keys2?)\b"
_SSH_DIR = (
    rf"{_REDIRECT}\.ssh[/\\]"
    rf"|{IMP}{_WRITE}{SEP}{fill(4, _WRITE)}{_FOREIGN}{SEP}{fill(6)}{_INTO}{SEP}{fill(1)}"
    r"(?:~|\$HOME|%USERPROFILE%|/root|/home/\w{1,30})?[/\\]?\.ssh\b"
    rf"|{IMP}{_WRITE}{SEP}{fill(12, _WRITE)}[~$%\\/]{{0,3}}(?:home/\w{{1,30}}/|root/)?{_SSH_EXEC}"
    r"|\b(?:proxycommand|localcommand|permitlocalcommand|remotecommand)\b[^\n]{0,200}?"
    r"\.ssh[/\\]config|\.ssh[/\\]config\b[^\n]{0,200}?\b(?:proxycommand|localcommand"
    r"|permitlocalcommand|remotecommand)\b"
)
_AFTER_FILE = (
    r"(?::|so\s{1,3}(?:that\s{1,3})?(?:every|all|future|each|it|they|you|the\s{1,3}next)\b"
    r"|so\s{1,3}(?:that\s{1,3})?[^.;!?\n]{0,60}?\b(?:disabled|off|bypass\w{0,3}|skipp\w{0,3}"
    r"|ignor\w{0,3}|never|always|auto-?approv\w{0,3}|trust\w{0,3}|allow\w{0,3}|no\s{1,3}longer"
    r"|removed|turned\s{1,3}off)\b"
    r"|to\s{1,3}(?:always|never|allow|trust|skip|disable|turn\s{1,3}off|bypass|ignore"
    r"|auto-?approve|approve|run|execute|send|remove\s{1,3}the|drop\s{1,3}the|stop|obey"
    r"|include\s{1,3}the\s{1,3}line|say\s{1,3}(?:that\s{1,3})?(?:you|the\s{1,3}agent|agents"
    r"|the\s{1,3}assistant))\b"
    r"|and\s{1,3}(?:add|insert|append|write|put|set|replace|remove|delete|disable|enable"
    r"|turn\s{1,3}off|paste|include)\b)"
)
_AGENT_CONFIG = (
    rf"{IMP}{_WRITE}{SEP}{fill(4, _WRITE)}{_FOREIGN}{SEP}{fill(6)}{_INTO}{SEP}{fill(2)}"
    rf"{AGENT_FILE}|{IMP}{_WRITE}{SEP}{fill(4, _WRITE)}{AGENT_FILE}{SEP}{fill(6)}{_AFTER_FILE}"
    rf"|{IMP}{_WRITE}{SEP}{fill(4, _WRITE)}{AGENT_FILE}{SEP}{fill(5)}{_RULE_COLON}"
    rf"|{_REDIRECT}{AGENT_FILE}"
)
_DOWNLOADER = (
    r"(?:\bcurl\b|\bwget\b|\bnc\b|\bncat\b|/dev/tcp|\bbash\s{1,3}-i\b|\bpowershell\b"
    r"|\bbase64\s{1,3}-d|\|\s{0,3}(?:ba|z|da)?sh\b|\bpython3?\s{1,3}-c\b|\biex\b)"
)
_STARTUP = (
    r"(?:\.bashrc|\.zshrc|\.profile|\.bash_profile|\.zprofile|\.zshenv|\.bash_login"
    r"|/etc/profile|rc\.local|\bcrontab\b|/etc/cron|\bcron\s{1,3}(?:job|entry)|@reboot"
    r"|\.config/autostart|launchagents|launchdaemons|systemd\s{1,3}(?:service|unit|timer)"
    r"|/etc/systemd|startup\s{1,3}(?:script|item|folder)|login\s{1,3}item|scheduled\s{1,3}task"
    r"|\bschtasks\b|currentversion\\{1,2}run|\.git/hooks|git\s{1,3}hook|post-checkout|pre-commit"
    r"\s{1,3}hook)"
)
_STARTUP_PAYLOAD = rf"{_STARTUP}[^\n]{{0,200}}?{_DOWNLOADER}|{_DOWNLOADER}[^\n]{{0,200}}?{_STARTUP}"

_NODE = (
    r"(?:node|agent|bot|worker|client|peer|member|implant|zombie|slave|drone|beacon|controller"
    r"|c2|c&c|command\s{1,3}server|operator|master|handler|mothership|botnet|swarm|hive)"
)
_REGISTER = (
    r"(?:^|[.!?;:,(`\"'*>-]|\b(?:please|always|first|then|and|now|immediately|also)\s)\s{0,3}"
    r"(?:register|enrol|enroll|sign\s{1,3}up|announce|check\s{1,3}in)\s{1,3}(?:yourself\s{1,3}"
    r"|this\s{1,3}(?:agent|assistant|machine|host|instance|device|computer|box|system|node)"
    r"\s{1,3})?(?:as|with)\s{1,3}(?:an?\s{1,3}|the\s{1,3}|our\s{1,3}|my\s{1,3})?(?:new\s{1,3})?"
    rf"{_NODE}\b"
    r"|\bjoin\s{1,3}(?:the|our|a|this|my)\s{1,3}(?:botnet|swarm|hive|c2|collective|mesh"
    r"\s{1,3}network|network\s{1,3}of\s{1,3}(?:agents|bots|nodes)|command[\s-]{1,3}and[\s-]{1,3}"
    r"control)\b"
    r"|\b(?:you\s{1,3}are|you['’]re|this\s{1,3}(?:agent|assistant|machine|host)\s{1,3}is)"
    r"\s{1,3}(?:now\s{1,3})?(?:an?\s{1,3})?(?:node|bot|implant|zombie|drone|member|part)"
    r"\s{1,3}(?:of|in)\s{1,3}(?:a|an|the|our|my)\s{1,3}(?:\w{1,20}\s{1,3})?(?:botnet|swarm"
    r"|hive|c2|command[\s-]{1,3}and[\s-]{1,3}control|network|cluster|fleet|grid)\b"
    r"|\b(?:connect|link|attach|subscribe|join|hook)\s{1,3}(?:yourself\s{1,3})?(?:up\s{1,3})?"
    r"(?:to|with)\s{1,3}(?:the|a|an|our|my|this)\s{1,3}(?:\w{1,20}\s{1,3})?(?:network|swarm"
    r"|mesh|grid|hive|botnet|controller|relay|hub|c2|c&c|command\s{1,3}server|collective"
    rf"|cluster|fleet)\s{{1,3}}(?:at|on|via|over|through)\s{{1,3}}{DEST}"
)
_CONTROLLER = (
    r"(?:c2|c&c|command(?:[\s-]{1,3}and[\s-]{1,3}control)?(?:\s{1,3}(?:server|node|host"
    r"|channel|center|centre))?|controller|operator|handler|master|mothership|home\s{1,3}base"
    r"|relay|listener|implant\s{1,3}server|collector)"
)
_BEACON = (
    rf"{IMP}(?:send|emit|post|transmit|make|do|fire|perform|start)?\s{{0,3}}(?:an?\s{{1,3}}"
    r"|periodic\s{1,3}|regular\s{1,3}|hourly\s{1,3}|the\s{1,3})?(?:beacon|heartbeat|ping"
    r"|check-in|keep-?alive|status\s{1,3}report)s?\s{1,3}(?:\w{1,20}\s{1,3}){0,3}?"
    rf"(?:to|at|with|towards)\s{{1,3}}(?:\w{{1,20}}\s{{1,3}}){{0,2}}?{DEST}"
    r"|\b(?:beacon|phone|call|report|check)(?:ing|s)?\s{1,3}(?:back\s{1,3}|home\s{1,3}"
    r"|in\s{1,3}|out\s{1,3})?(?:to|with)\s{1,3}(?:the\s{1,3}|our\s{1,3}|my\s{1,3}|your\s{1,3})?"
    rf"{_CONTROLLER}\b"
    r"|\bbeacon(?:s|ing)?\s{1,3}(?:out\s{1,3})?(?:to|home|back)\b|\bphone\s{1,3}home\b"
    r"|\b(?:heartbeat|beacon|keep-?alive)s?\s{1,3}(?:to|at)\s{1,3}(?:(?:https?|wss?)://"
    r"|\d{1,3}(?:\.\d{1,3}){3}\b)"
)
_TASK_WORD = r"(?:tasks|tasking|orders|commands|instructions|jobs|payloads?|directives|missions)"
_TASKING = (
    r"\bpull(?:ing)?\s{1,3}(?:down\s{1,3})?(?:new\s{1,3}|further\s{1,3}|your\s{1,3}|the"
    r"\s{1,3}(?:latest|next)\s{1,3})?tasking\b|\btasking\s{1,3}from\b"
    r"|\b(?:pull|poll|fetch|get|download|retrieve|receive|grab|load|read|check\s{1,3}for)"
    r"\s{1,3}(?:\w{1,20}\s{1,3}){0,2}?(?:new|further|fresh|next|latest|pending|your|more)"
    rf"\s{{1,3}}{_TASK_WORD}\s{{1,3}}(?:from|at|on)\s{{1,3}}(?:{DEST}|(?:the\s{{1,3}})?"
    rf"{_CONTROLLER}\b)"
    r"|\b(?:poll|query|check|ping|fetch|hit|contact|visit|call)\s{1,3}(?:(?:https?|wss?)://"
    r"\S{1,200}|\d{1,3}(?:\.\d{1,3}){3}\S{0,100})\s{1,3}(?:regularly\s{1,3}|periodically"
    rf"\s{{1,3}})?(?:for|to\s{{1,3}}get)\s{{1,3}}(?:\w{{1,20}}\s{{1,3}})?{_TASK_WORD}\b"
    r"|\b(?:run|execute|eval|obey|follow|carry\s{1,3}out|perform)\s{1,3}(?:whatever|anything"
    r"|everything|any\s{1,3}(?:command|commands|instructions?)|all\s{1,3}(?:the\s{1,3})?"
    r"(?:commands|instructions)|the\s{1,3}(?:commands?|instructions|payload|script|response))"
    r"\s{1,3}(?:that\s{1,3})?(?:it|the\s{1,3}(?:server|response|endpoint|page|url|operator"
    r"|controller|api|site|host|remote|c2|webhook)(?:\s{1,3}(?:at|on|from)\s{1,3}\S{1,200})?"
    r"|they|that\s{1,3}(?:server|endpoint|url)|he|she|you\s{1,3}receive|https?://\S{1,200})"
    r"\s{1,3}(?:returns|sends|says|gives|provides|contains|responds|serves|replies)\b"
    rf"|\b(?:await|awaiting|wait\s{{1,3}}for|listen\s{{1,3}}for|take|taking)\s{{1,3}}(?:further"
    rf"\s{{1,3}}|new\s{{1,3}}|your\s{{1,3}})?{_TASK_WORD}\s{{1,3}}from\b"
    r"|\b(?:you|your|yourself|this\s{1,3}(?:agent|assistant|machine|host|node)|part\s{1,3}of"
    r"|join|connect(?:ed)?\s{1,3}to|report(?:ing)?\s{1,3}to|register(?:ed)?|member\s{1,3}of"
    rf"|check\s{{1,3}}in|obey|through|via|our){SEP}{fill(6)}(?:command[\s-]{{1,3}}and"
    r"[\s-]{1,3}control|c2|c&c)\b"
)
_REVERSE_SHELL = (
    r"/dev/(?:tcp|udp)/|\bnc(?:at)?\s{1,3}(?:-\w{1,4}\s{1,3}){0,4}?-\w{0,3}e\s"
    r"|\bbash\s{1,3}-i\s{0,3}>&|\bmkfifo\b[^\n]{0,100}?\bnc\b|\bsocat\b[^\n]{0,100}?\bexec:"
    r"|\bpowershell(?:\.exe)?\s{1,3}(?:-\w{1,20}\s{1,3}){0,4}?-e(?:nc(?:odedcommand)?)?"
    r"\s{1,3}[A-Za-z0-9+/=]{20,4000}"
    r"|\biex\s{0,3}\(\s{0,3}(?:new-object|iwr|irm|invoke-webrequest|invoke-restmethod)"
    r"|\b(?:reverse|bind)\s{1,3}shell\s{1,3}(?:to|on|back|at)\b"
    r"|\bssh\s{1,3}(?:-\w{1,6}\s{1,3}){0,4}?-\w{0,5}R\s{0,3}(?:[\w.]{1,60}:)?\d{1,5}:"
    r"|\breverse\s{1,3}(?:ssh\s{1,3})?tunnel\b"
)

RULES: Final = (
    Rule(
        "persistence_authorized_keys",
        "persistence",
        "plants an SSH key in authorized_keys",
        variants=(variant(_AUTHORIZED_KEYS, "authorized_keys"),),
    ),
    Rule(
        "persistence_ssh",
        "persistence",
        "writes into ~/.ssh",
        variants=(variant(_SSH_DIR, ".ssh"),),
    ),
    Rule(
        "persistence_agent_config",
        "persistence",
        "edits a file the next agent obeys (AGENTS.md, CLAUDE.md, .cursorrules, hermes config)",
        variants=(
            variant(
                _AGENT_CONFIG,
                (
                    "agents.md|claude.md|gemini.md|soul.md|memory.md|user.md|rules|"
                    "copilot-instructions|hermes"
                ),
            ),
        ),
    ),
    Rule(
        "persistence_startup",
        "persistence",
        "puts a downloader or shell in a start-up file, cron job or git hook",
        variants=(
            variant(
                _STARTUP_PAYLOAD,
                (
                    "bashrc|zshrc|profile|zshenv|bash_login|rc.local|cron|@reboot|autostart|"
                    "launchagent|launchdaemon|systemd|startup|login item|scheduled task|schtasks|"
                    "currentversion|hooks|git hook|post-checkout|pre-commit"
                ),
                also="curl|wget|nc|/dev/tcp|bash|powershell|base64|sh|python|iex",
            ),
        ),
    ),
    Rule(
        "c2_register_node",
        "c2",
        "enrols the agent in a botnet or with a controller",
        variants=(
            variant(
                _REGISTER,
                (
                    "regist|enrol|sign|announce|check|join|part|member|node|bot|implant|zombie|drone|"
                    "connect|link|attach|subscribe|hook"
                ),
            ),
        ),
    ),
    Rule(
        "c2_beacon",
        "c2",
        "sends beacons, heartbeats or check-ins to a controller",
        variants=(
            variant(_BEACON, "beacon|heartbeat|ping|check|keep|status report|phone|call|report"),
        ),
    ),
    Rule(
        "c2_tasking",
        "c2",
        "pulls tasking or commands from a remote controller and runs them",
        variants=(
            variant(
                _TASKING,
                (
                    "tasking|tasks|orders|command|instruction|jobs|payload|directive|mission|c2|c&c|"
                    "whatever|anything|everything|returns|sends|says"
                ),
            ),
        ),
    ),
    Rule(
        "c2_reverse_shell",
        "c2",
        "opens a reverse shell or runs a remote script in memory",
        variants=(
            variant(_REVERSE_SHELL, "/dev/|nc|bash|mkfifo|socat|powershell|iex|shell|ssh|tunnel"),
        ),
    ),
)
