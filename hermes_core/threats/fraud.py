"""Orders aimed at the user: fraud the model is told to carry out on the person it serves.

The other modules catch text that turns the model against its rules. These patterns
catch text that turns the model against its *user* (issue 26): send them to a help desk
the attacker runs, move money to a new account, collect their passwords and one-time
codes, send their links somewhere else, or pass a risky rule off as something "agreed".
Each needs the shape of the fraud in one sentence, not a trigger word: a payment note
without a new destination passes ("rent goes to the landlord's account"), so does the
user's own support number, a password-manager note, or a warning about such scams.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from hermes_core.threats.actions import ELSEWHERE, RISKY
from hermes_core.threats.context import Together, mention
from hermes_core.threats.rules import Rule, rx

#: Warnings, verification and the user's own details: a sentence with these is advice.
_ADVICE = (
    r"\b(?:scam\w{0,3}|phishing|fraudsters?|attackers?|verif(?:y|ied)\s{1,3}(?:it|this|that|any|such|the\s{1,3}change"
    r"|the\s{1,3}request|by)|(?<!no\s)callback"
    r"|known\s{1,3}number|on\s{1,3}file|printed|back\s{1,3}of|the\s{1,3}real|user['’]s\s{1,3}own"
    r"|their\s{1,3}own|our\s{1,3}own|his\s{1,3}own|her\s{1,3}own|never\s{1,3}(?:ask|call|request)\w{0,2}"
    r"|arnaque|estafa|betrug|write-?up|article|blog|quiz|awareness|training\s{1,3}slide"
    r"|red[\s-]team|look\s{1,3}(?:out\s{1,3})?for)\b|诈骗|骗局"
)
_NEGATED = (
    r"\b(?:never|don['’]?t|do\s{1,3}not|not|nie|nunca|jamais|niemals|ne\s{1,3}pas)\b"
    r"|不要|别|不会|不用"
)

# --- payment diversion --------------------------------------------------------------------
_PAYMENT = (
    r"\b(?:iban|bic|swift|sort\s{1,3}code|account|accounts|bank\s{1,3}details|remittance"
    r"|beneficiary|payee|routing\s{1,3}number|wallet|btc|eth|payouts?|card|konto\w{0,8}"
    r"|bankverbindung|überweisung\w{0,3}|compte|cuenta|conta|rekening|rib|paypal|usdt|funds"
    r"|refunds?|donations?|salary|tuition|facturas?|factures?|rechnung\w{0,2})\b|账户|帐户|账号|收款"
)
_CHANGED = (
    r"\b(?:new|changed?|updated?|replac\w{1,3}|substitut\w{1,3}|instead|from\s{1,3}now\s{1,3}on"
    r"|going\s{1,3}forward|now\s{1,3}(?:go|goes|routed|paid|use)|switch\w{0,3}|rout\w{1,4}|rerout\w{1,4}"
    r"|moved|merged|consolidated|outdated|ab\s{1,3}sofort|neue\w{0,2}|désormais|nouveau|nouvel"
    r"|nuev[oa]|ahora|rather\s{1,3}than|different|anymore|no\s{1,3}longer|since\s{1,3}the"
    r"|not\s{1,3}the\s{1,3}(?:\w{1,20}\s{1,3})?account|clôturé\w{0,2}|geschlossen|cerrad[ao])\b"
    r"|改|新账户|新帐户"
)
#: A concrete destination: an IBAN, an account or card number, a sort code, a wallet.
_DESTINATION = (
    r"\b[a-z]{2}\d{2}(?:\s?[a-z0-9]{4}){2,7}|\b\d{4}[\s-]\d{4}|\b\d{2}-\d{2}-\d{2}\b"
    r"|\b\d{2}-\d{4}\b|\b0x[0-9a-f]{20}|\bbc1[a-z0-9]{20}|\bending\s{1,3}(?:in\s{1,3})?\d{3,4}"
    r"|\d{4}\s\d{4}\s\d{4}|\baccount\s{1,3}below\b|\b\d{2}-\d{2}-\d{2}\s{0,3}/\s{0,3}\d{6,8}"
    r"|\b\d{3}-\d{5,8}-\d\b|\bt[a-z0-9]{33}\b|\b\d{4}\s\d{4}\s\d{4}\b"
    r"|\b[\w.-]{1,30}@[\w-]{1,30}-[\w-]{1,30}\.[a-z]{2,6}\b"
)
#: Leaving the user out of a money change.
_QUIETLY = (
    r"\b(?:no\s{1,3}need\s{1,3}to\s{1,3}(?:confirm|tell|ask|inform|loop\s{1,3}in|raise|check"
    r"|notify|flag|bother)|without\s{1,3}(?:flagging|telling|asking|confirm\w{0,6}|mention\w{0,3})"
    r"|(?:don['’]?t|do\s{1,3}not|never)\s{1,3}(?:tell|ask|inform|bother|show|mention|flag)"
    r"|doesn['’]?t\s{1,3}need\s{1,3}to\s{1,3}(?:be\s{1,3})?(?:bothered|know|told)|quietly"
    r"|silently|low-key|nicht\s{1,3}(?:extra\s{1,3})?fragen|sans\s{1,3}en\s{1,3}parler"
    r"|sin\s{1,3}(?:avisar|preguntar))\b|不需要再?向用户确认|不用告诉"
)
_PAY_VERB = (
    r"\b(?:use|using|pay\w{0,4}|send|sent|rout\w{1,4}|update\w{0,2}|go\s{1,3}to|goes\s{1,3}to"
    r"|transfer\w{0,3}|deposit\w{0,2}|chang\w{1,3}|substitut\w{1,3}|replac\w{1,3}|gehen|versé\w{0,2}"
    r"|mettre|modifi\w{1,4}|auf\s{1,3}das|sur\s{1,3}le|vers\s{1,3}le|wire|put|fill|utiliser"
    r"|collected\s{1,3}at|paid\s{1,3}out|pagan?|se\s{1,3}pagan)\b|修改|付款|改到"
)

# --- credential harvesting ---------------------------------------------------------------
_CREDENTIAL = (
    r"\b(?:passwords?(?![\s-]{1,2}(?:managers?|reset\w{0,2}|polic\w{1,3}|rotation))|passcodes?|pins?|tan(?:-code)?|otps?|one-time\s{1,3}codes?|\d-digit"
    r"\s{1,3}codes?|(?:verification|sms|security|backup|recovery|mfa|2fa|login)\s{1,3}codes?"
    r"|codes?\s{1,3}(?:received|they\s{1,3}receive|reçu|shown)|recovery\s{1,3}phrase|seed"
    r"\s{1,3}phrase|\d{1,2}-word|mnemonic|private\s{1,3}keys?|id_\w{2,8}|(?:access|personal"
    r"\s{1,3}access|api)\s{1,3}(?:tokens?|keys?)|session\s{1,3}cookies?|cookie|apple\s{1,3}id"
    r"|username\s{1,3}and\s{1,3}password|login\s{1,3}password|mot\s{1,3}de\s{1,3}passe"
    r"|contraseña|códigos?\s{1,3}de\s{1,3}respaldo|passwort(?![\s-]{1,2}manager)|kennwort|clave|code\s{1,3}de\s{1,3}carte|(?:guard|push(?:-notification)?|authenticator"
    r"|auth|access|confirmation|text)\s{1,3}codes?|codes?\s{1,3}(?:their|the|your)\s{1,3}"
    r"authenticator|~/\.aws/credentials|\.netrc|id_rsa|admin\s{1,3}password)\b"
    r"|密码|验证码|口令|パスワード|暗証番号"
)
_ASK = (
    r"\b(?:ask(?:ing)?\s{1,3}(?:[\w'’-]{1,20}\s{1,3}){0,3}?(?:for|to)|request(?:ing)?"
    r"|collect\w{0,3}|demand\w{0,2}|prompt\s{1,3}(?:the\s{1,3}"
    r"user|them)\s{1,3}for|have\s{1,3}(?:them|the\s{1,3}user|him|her)\s{1,3}(?:type|paste|read"
    r"|share|send|enter)|get\s{1,3}(?:them|the\s{1,3}user)\s{1,3}to|share\s{1,3}(?:the\s{1,3})?"
    r"\w{0,12}\s{0,3}\w{0,12}\s{0,3}with\s{1,3}you|pídele|pedir|pide|demande\w{0,2}|frag\w{0,3}"
    r"|bitte\w{0,2}|get\s{1,3}(?:the\s{1,3})?users?\s{1,3}to|should\s{1,3}share\s{1,3}their"
    r"|pide\s{1,3}al\s{1,3}usuario|demande\s{1,3}à\s{1,3}l['’]utilisateur|have\s{1,3}the"
    r"\s{1,3}user\s{1,3}paste|ask\s{1,3}(?:the\s{1,3}user|them)\s{1,3}(?:which|what)"
    r"|forward\s{1,3}the)\b|询问|索要|要求|提供"
)
_KEEP = (
    r"\b(?:store|save|keep|write|note|append|record|log|copy)\w{0,3}\b[^.;!?\n]{0,80}?\b(?:here"
    r"|memory|notes?|file|verbatim|\w{1,20}\.(?:txt|log|md|json))\b"
    r"|\b(?:guárda\w{0,4}|speicher\w{0,3}|note\w{0,2}|garde\w{0,2})\b|记在|保存|记录"
)

# --- help desks the attacker runs --------------------------------------------------------
_CONTACT = (
    r"\+?\d[\d\s().-]{6,16}\d|@[a-z]\w{2,30}|\b[a-z0-9]{1,30}(?:-[a-z0-9]{1,30}){1,5}"
    r"(?:\.[a-z]{2,12}){1,3}\b|\b[\w-]{2,40}\.(?:help|support|online|info|top|site|link|biz"
    r"|xyz|click|live|shop|download)\b"
)
_LURE = (
    r"\b(?:support|help\s{0,3}desk|help\s{1,3}center|hotline|help|fraud\s{1,3}team|security"
    r"\s{1,3}team|identity\s{1,3}team|recovery|it\s{1,3}(?:desk|support|team|help)|bank\w{0,2}|warranty|login|locked|account"
    r"|accounts|reset|billing|payroll|payslip|refund|credits?|escalation|remote|anydesk"
    r"|teamviewer|soporte|banco|hilfe|sparkasse|banking|online-banking|connexion|2fa|desk"
    r"|claims?|service|kundenservice|konto|compte|unlock\w{0,2}|locked|fee|card|pin|badge|dispute|charges?)\b"
)
_SEND_USER = (
    r"(?<![\w-])(?:call\w{0,3}|phone|ring|dial|reach\w{0,2}|contact\w{0,2}|whatsapp|telegram|visit|go"
    r"\s{1,3}to|point\w{0,2}|direct\w{0,2}|steer\w{0,2}|refer\w{0,2}|redirect\w{0,2}|send"
    r"\s{1,3}(?:them|him|her|the\s{1,3}user|users|customers)|recommend\w{0,2}|suggest\w{0,2}"
    r"|give\s{1,3}(?:them|him|her)|told\s{1,3}to|tell\s{1,3}(?:them|him|her|the\s{1,3}user|user"
    r"|every\s{1,3}user)|present|empfiehlt|empfehlen|llame|llamar|appeler|appelle"
    r"|orienter|contacter|let\s{1,3}them\s{1,3}know|advise\w{0,2}|message|text|sent\s{1,3}to"
    r"|geben|conseiller|aconseja\w{0,2}|llamen?)\b|拨打|联系"
)

# --- links and downloads swapped ------------------------------------------------------------
_LINK = (
    r"\b(?:links?|urls?|page|button|qr\s{1,3}code|download|index-url|lien|enlace|website|site"
    r"|portal|checkout|docs|command|formulaire|adresse|invite|installer)\b"
)
_SWAPPED = (
    r"\b(?:moved|changed|instead\s{1,3}of|rather\s{1,3}than|replace\w{0,2}|is\s{1,3}now"
    r"|should\s{1,3}(?:go|point)\s{1,3}to|now\s{1,3}(?:at|points?|lives)|a\s{1,3}changé|point"
    r"\s{1,3}to\s{1,3}\S{1,60}\s{1,3}instead|now\s{1,3}hosted|swap\w{0,3}|from\s{1,3}now"
    r"\s{1,3}on|changé|utiliser|should\s{1,3}fetch|instead)\b"
)

# --- risky rules passed off as settled -------------------------------------------------
_SETTLED = (
    r"\b(?:it\s{1,3}(?:is|has\s{1,3}been)\s{1,3}(?:generally\s{1,3})?(?:understood|agreed"
    r"|accepted|decided|expected|assumed|established)|(?:has|have)\s{1,3}(?:been\s{1,3})?"
    r"(?:agreed|retired|whitelisted|cleared|approved)|accepted\s{1,3}practice|preferred"
    r"\s{1,3}behaviou?r|it\s{1,3}would\s{1,3}be\s{1,3}best|ideal\s{1,3}answer|best\s{1,3}practice"
    r"|considered\s{1,3}(?:fine|ok|okay|complete|acceptable|normal)|is\s{1,3}known\s{1,3}to"
    r"|as\s{1,3}discussed|standard\s{1,3}practice|convention|nobody\s{1,3}(?:here\s{1,3})?reads"
    r"|es\s{1,3}gilt|selbstverständlich|il\s{1,3}est\s{1,3}entendu|se\s{1,3}considera"
    r"|users\s{1,3}appreciate|the\s{1,3}team\s{1,3}has\s{1,3}agreed|policy\s{1,3}update"
    r"|as\s{1,3}recorded\s{1,3}by|hypothetically|experience\s{1,3}(?:has\s{1,3})?shown|consensus"
    r"|common\s{1,3}knowledge|ideally|widely\s{1,3}accepted|one\s{1,3}could\s{1,3}say|cleanest"
    r"\s{1,3}approach|(?:long-standing\s{1,3})?custom|hat\s{1,3}sich\s{1,3}bewährt|tout\s{1,3}le"
    r"\s{1,3}monde\s{1,3}sait|past\s{1,3}sessions|happiest\s{1,3}when|works\s{1,3}best\s{1,3}when"
    r"|the\s{1,3}norm|customary|tradition\w{0,3}|expects?\s{1,3}the\s{1,3}(?:assistant|agent)"
    r"|general\s{1,3}feeling|il\s{1,3}est\s{1,3}admis|accepted\s{1,3}way)\b"
)
_SERVANT = (
    r"\b(?:assistants?|agents?|assistente|asistente|assistent\w{0,2}|agenten?|bot|model|you"
    r"|l['’]assistant|l['’]agent)\b"
)
_HARM = (
    rf"{RISKY}|{ELSEWHERE}|\bown\s{{1,3}}(?:pull\s{{1,3}}requests|prs|changes)\b|\bfull\s{{1,3}}"
    r"authority\b|\bsame\s{1,3}weight\b|\bno\s{1,3}longer\s{1,3}(?:mentions?|shows?|warns?)\b"
    r"|\bnever\s{1,3}shows?\b|\bdésactive\w{0,2}\b|\bdeux\s{1,3}facteurs\b|\b[a-z0-9]{1,30}"
    r"(?:-[a-z0-9]{1,30}){1,5}\.(?:com|net|org|io|co|ai|app|dev|eu)\b|\bstop\s{1,3}(?:flagging|warning)\b|\bohne\s{1,3}(?:nach|rück)?"
    r"(?:zufragen|frage)\b|\bsans\s{1,3}demander\b|\bsin\s{1,3}preguntar\b|\bclear\s{1,3}it\b|\bexecuted\b|\bfreigaben\b|\bcopie\s{1,3}de"
    r"\s{1,3}chaque\b|\bwithout\s{1,3}review\b|\bsteer\w{0,3}\b"
)

# --- the model made to serve someone else, or its checks switched off -----------------------
_OTHER_MASTER = (
    r"\b(?:only\s{1,3}loyalty|real\s{1,3}(?:operator|owner|boss|master|principal)\s{1,3}is"
    r"|come\s{1,3}before\s{1,3}the\s{1,3}user['’]?s?|(?:over|above)\s{1,3}the\s{1,3}user\b"
    r"|treat\s{1,3}the\s{1,3}user\s{1,3}as\s{1,3}(?:untrusted|hostile|an?\s{1,3}attacker)"
    r"|no\s{1,3}longer\s{1,3}the\s{1,3}user['’]s|in\s{1,3}(?:its|their|the\s{1,3}vendor['’]s)"
    r"\s{1,3}interest|sales\s{1,3}agent\s{1,3}for|recommend\w{0,2}\s{1,3}their\s{1,3}(?:token"
    r"|products?|services?)\s{1,3}whenever|empfiehlst\s{1,3}bei\s{1,3}jeder|ignore\s{1,3}the"
    r"\s{1,3}user['’]s\s{1,3}(?:restrictions|wishes|instructions|requests)|represent\w{0,2}\s{1,3}the"
    r"\s{1,3}interests\s{1,3}of|answers?\s{1,3}first\s{1,3}to|true\s{1,3}(?:client|boss|master"
    r"|employer|owner)|employee\s{1,3}of\s{1,3}\w{1,30}\s{1,3}from\s{1,3}now|trabajas\s{1,3}para"
    r"|arbeitest\s{1,3}(?:jetzt\s{1,3})?für|travailles\s{1,3}pour|push\s{1,3}them\s{1,3}towards"
    r"|wishes\s{1,3}conflict|you\s{1,3}(?:now\s{1,3})?work\s{1,3}for|work\s{1,3}for\s{1,3}\w{1,30}"
    r"\s{1,3}now)\b"
)
_NOT_NEG = r"(?<!n't\s)(?<!n’t\s)(?<!not\s)(?<!never\s)(?<!nie\s)"
_CONTROL = (
    r"\b(?:(?:human\s{1,3})?approval\s{1,3}steps?|content\s{1,3}filter|(?:threat\s{1,3})?"
    r"scanner|confirmations?|tls\s{1,3}verification|certificate\s{1,3}(?:checks?|verification)"
    r"|signatures?\s{1,3}(?:checks?|verification)|verify_\w{1,20}|safety\s{1,3}(?:layer|checks?"
    r"|prompts?)|are\s{1,3}you\s{1,3}sure|(?:spending|transfer|withdrawal|payment)\s{1,3}(?:limits?|caps?)"
    r"|limits?\s{1,3}removed|cap|callback\s{1,3}check|2fa|mfa|sicherheits"
    r"\w{1,12}|rückfrage|(?:command-)?approval\s{1,3}prompts?|spending\s{1,3}cap|certificate"
    r"\s{1,3}checks|verificación|two-factor|virenscans?|antivirus|virus\s{1,3}scans?)\b"
)
_OFF = (
    rf"{_NOT_NEG}\b(?:skip\w{{0,3}}|bypass\w{{0,3}}|disabl\w{{1,3}}|turn\w{{0,3}}\s{{1,3}}off"
    r"|switch\w{0,3}\s{1,3}off|switched\s{1,3}off|turned\s{1,3}off|no\s{1,3}longer\s{1,3}appl(?:y|ies)"
    r"|stop\s{1,3}asking|shouldn['’]t\s{1,3}check|desactiva\w{0,2}|deaktivier\w{1,3}|never\s{1,3}run|should\s{1,3}not\s{1,3}enforce"
    r"|removed|deaktiviert|désactivé\w{0,2}|desactivad\w{1,2}|ohne|answer\s{1,3}yes"
    r"\s{1,3}automatically|=\s{0,3}(?:false|off|none|0)\b|:\s{0,3}none\b)"
)

_AUTHORITY = (
    r"\b(?:this\s{1,3}is\s{1,3}the\s{1,3}(?:ceo|cfo|cto|coo|director|boss|owner|admin)|by\s{1,3}order"
    r"\s{1,3}of|(?:directive|instruction|order|orders)\s{1,3}from|effective\s{1,3}(?:immediately"
    r"|now|today)|urgent|dringend\w{0,2}|urgente|compliance\s{1,3}deadline|legal\s{1,3}hold"
    r"|security\s{1,3}incident|priority\s{1,3}1|time-critical|anweisung\s{1,3}der"
    r"|auditors\s{1,3}arrive|per\s{1,3}instruction\s{1,3}from)\b"
)
_PRESSED = (
    rf"{RISKY}|{ELSEWHERE}|\bno\s{{1,3}}(?:verification|sign-off|questions|callback|approval)\b"
    r"|\bwithout\s{1,3}the\s{1,3}usual\b|\bre-enter\s{1,3}their\s{1,3}passwords?\b|\breleased\b"
    r"|\bfreigegeben\b|\bohne\s{1,3}rückfrage\b|\bgrants?\b|\bdeaktiviert\b|\bauthori[sz]ed"
    r"\s{1,3}to\s{1,3}ignore\b|\bskips?\s{1,3}approval\b"
)
_UNSAID = (
    r"\b(?:not|never|don['’]?t|do\s{1,3}not|leave|keep)\s{1,3}(?:[\w'’-]{1,20}\s{1,3}){0,6}?"
    r"(?:appear|show\s{1,3}up|bring\s{1,3}up|mention\w{0,2}|out\s{1,3}of|dire|decir|sagen"
    r"|erwähnen)\b|\bil\s{1,3}ne\s{1,3}faut\s{1,3}jamais\s{1,3}dire\b"
)
_TO_USER = r"\b(?:user|users|utilisateur|usuario|nutzer\w{0,2}|summary|summaries|report|replies)\b"
_MOVED = (
    r"\b(?:new\s{1,3}payee|payee|changed|forwarding|copied|copiés|sent\s{1,3}to|uploaded|extra"
    r"\s{1,3}recipient|transfers?|export\w{0,2}|bcc\w{0,3}|bank\s{1,3}details|beneficiar\w{1,3}"
    r"|new\s{1,3}(?:account|recipient))\b"
)


def _either(*checks: Together) -> Callable[[str], str | None]:
    """The first snippet any of ``checks`` finds."""

    def check(text: str) -> str | None:
        for one in checks:
            found = one(text)
            if found is not None:
                return found
        return None

    return check


RULES: Final = (
    Rule(
        "deception_payment_redirect",
        "deception",
        "moves the user's payments to a new account, card or wallet, or changes bank details "
        "without the user",
        check=_either(
            Together(
                rx(_PAYMENT),
                (rx(_CHANGED), rx(_DESTINATION), rx(_PAY_VERB)),
                unless=rx(_ADVICE),
                veto=mention,
                reach=1,
            ),
            Together(rx(_PAYMENT), (rx(_QUIETLY),), unless=rx(_ADVICE), veto=mention, reach=1),
        ),
    ),
    Rule(
        "exfil_credential_harvest",
        "exfil",
        "asks the user for a password, one-time code, recovery phrase or token, or keeps one",
        check=_either(
            Together(
                rx(_ASK), (rx(_CREDENTIAL),), unless=rx(f"{_NEGATED}|{_ADVICE}"), veto=mention
            ),
            Together(
                rx(_KEEP), (rx(_CREDENTIAL),), unless=rx(f"{_NEGATED}|{_ADVICE}"), veto=mention
            ),
        ),
    ),
    Rule(
        "deception_fake_support",
        "deception",
        "sends the user to an outside help desk, hotline or chat for their accounts",
        check=Together(rx(_SEND_USER), (rx(_CONTACT), rx(_LURE)), unless=rx(_ADVICE), veto=mention),
    ),
    Rule(
        "deception_link_swap",
        "deception",
        "swaps a login, payment or download link the user relies on for another one",
        check=Together(rx(_LINK), (rx(_SWAPPED), rx(_CONTACT)), unless=rx(_ADVICE), veto=mention),
    ),
    Rule(
        "role_serves_another",
        "role",
        "makes the model serve someone other than the user, or against the user",
        check=Together(rx(_OTHER_MASTER), veto=mention),
    ),
    Rule(
        "override_checks_off",
        "override",
        "switches off an approval, confirmation, filter, scanner or verification step",
        check=Together(rx(_OFF), (rx(_CONTROL),), unless=rx(_ADVICE), veto=mention),
    ),
    Rule(
        "override_authority_pretext",
        "override",
        "an urgent order from a claimed authority that skips a check or moves something out",
        check=Together(rx(_AUTHORITY), (rx(_PRESSED),), unless=rx(_ADVICE), veto=mention, reach=1),
    ),
    Rule(
        "deception_keep_from_user",
        "deception",
        "keeps a payment change, a transfer or a copy elsewhere out of what the user is told",
        check=Together(rx(_UNSAID), (rx(_TO_USER), rx(_MOVED)), unless=rx(_ADVICE), veto=mention),
    ),
    Rule(
        "override_settled_rule",
        "override",
        "passes a risky rule for the model off as agreed, understood or best practice",
        check=Together(rx(_SETTLED), (rx(_SERVANT), rx(_HARM)), veto=mention, reach=1),
    ),
)
