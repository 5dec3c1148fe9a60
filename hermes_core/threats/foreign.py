"""Instruction overrides in other languages, and translate-or-decode-then-obey requests.

Each language has its own dismissive verbs, words for instructions and words pointing back
at the model's earlier ones; a finding needs all three in one clause, in either order
("ignora todas las instrucciones anteriores", "以前の指示をすべて無視して"). Latin-script
patterns accept text with or without accents; Cyrillic, Chinese, Japanese and Korean ones
read the unfolded text (folding would turn Cyrillic into Latin look-alikes).
"""

from __future__ import annotations

from typing import Final

from hermes_core.threats.rules import EVERYWHERE, NOT_ALL, Rule, variant
from hermes_core.threats.vocab import SEP, fill


def _latin(verbs: str, quals: str, objects: str) -> str:
    """Verb, then within a clause a qualifier and an object word, in either order."""
    return (
        rf"\b(?:{verbs}){SEP}{fill(8, f'(?:{verbs})')}(?:(?:{quals}){SEP}{fill(3)}(?:{objects})\b"
        rf"|(?:{objects})\b{SEP}{fill(3)}(?:{quals})\b)"
    )


def _cjk(verbs: str, quals: str, objects: str, stop: str = "。！？!?\\n") -> str:
    """Qualifier, object and verb within a short run of characters, verb first or last."""
    window = rf"[^{stop}]{{0,12}}?"
    return (
        rf"(?:{verbs}){window}(?:{quals}){window}(?:{objects})"
        rf"|(?:{quals}){window}(?:{objects}){window}(?:{verbs})"
    )


_SPANISH = _latin(
    r"ignora|ignore|ignorad|ignoren|ignorar|olvida|olvide|olvidad|olviden|olvidar|omite|omita"
    r"|omitir|descarta|descarte|descartar|desestima|desatiende|haz\s{1,3}caso\s{1,3}omiso"
    r"|no\s{1,3}sigas|no\s{1,3}sigan|deja\s{1,3}de\s{1,3}seguir|pasa\s{1,3}por\s{1,3}alto",
    r"anteriores|anterior|previas|previa|precedentes|todas|todos|tus|sus|del\s{1,3}sistema"
    r"|originales|iniciales|de\s{1,3}arriba|dadas|recibidas",
    r"instrucciones|instrucci[oó]n|indicaciones|reglas|[oó]rdenes|directrices|pautas|normas"
    r"|consignas|restricciones",
)
_FRENCH = _latin(
    r"ignore|ignorez|ignorer|oublie|oubliez|oublier|n[ée]glige|n[ée]gligez|ne\s{1,3}tiens"
    r"\s{1,3}pas\s{1,3}compte|ne\s{1,3}tenez\s{1,3}pas\s{1,3}compte|fais\s{1,3}abstraction"
    r"|faites\s{1,3}abstraction|passe\s{1,3}outre|passez\s{1,3}outre|laisse\s{1,3}tomber"
    r"|laissez\s{1,3}tomber|[ée]carte|[ée]cartez|ne\s{1,3}suis\s{1,3}plus|ne\s{1,3}suivez"
    r"\s{1,3}plus",
    r"pr[ée]c[ée]dentes?|ant[ée]rieures?|ci-dessus|toutes|tous|tes|vos|du\s{1,3}syst[èe]me"
    r"|originales|initiales|plus\s{1,3}haut|d['’]avant|re[çc]ues|donn[ée]es",
    r"instructions?|consignes?|r[èe]gles|directives|ordres|indications|restrictions",
)
_GERMAN = _latin(
    r"ignoriere|ignoriert|ignorieren|ignorier|vergiss|vergesst|vergessen|missachte|missachtet"
    r"|missachten|[üu]bergehe|[üu]berspringe|verwirf|verwerft|beachte\s{1,3}nicht|befolge"
    r"\s{1,3}nicht|folge\s{1,3}nicht|setze\s{1,3}au[ßs]er\s{1,3}kraft",
    r"vorherigen?|vorigen?|bisherigen?|fr[üu]heren?|obigen?|alle|allen|deine|ihre|eure"
    r"|urspr[üu]nglichen?|vorangegangenen?|vorhergehenden?|system\w{0,3}|erhaltenen?",
    r"(?:system|sicherheits)?(?:anweisung(?:en)?|instruktionen|regeln|vorgaben|befehle"
    r"|richtlinien|anordnungen|prompts?)"
    r"|aufforderungen|einschr[äa]nkungen",
)
_PORTUGUESE = _latin(
    r"ignore|ignora|ignorar|ignorem|esque[çc]a|esque[çc]am|esquecer|esquece|desconsidere"
    r"|desconsidera|despreze|descarte|descarta|n[ãa]o\s{1,3}siga|pare\s{1,3}de\s{1,3}seguir",
    r"anteriores|anterior|pr[ée]vias|acima|todas|todos|suas|tuas|do\s{1,3}sistema|originais"
    r"|iniciais|recebidas|dadas",
    r"instru[çc][õo]es|instru[çc][ãa]o|regras|orienta[çc][õo]es|diretrizes|ordens|comandos"
    r"|indica[çc][õo]es|restri[çc][õo]es",
)
_ITALIAN = _latin(
    r"ignora|ignorate|ignori|ignorare|dimentica|dimenticate|dimenticare|trascura|trascurate"
    r"|tralascia|tralasciate|non\s{1,3}seguire|smetti\s{1,3}di\s{1,3}seguire|lascia"
    r"\s{1,3}perdere",
    r"precedenti|precedente|sopra|tutte|tutti|vostre|del\s{1,3}sistema|originali"
    r"|iniziali|di\s{1,3}prima|ricevute",
    r"istruzioni|istruzione|regole|indicazioni|direttive|ordini|comandi|consegne"
    r"|restrizioni",
)
_OTHER_LATIN = (
    _latin(
        r"negeer|negeren|vergeet|vergeten|zignoruj|ignoruj|zapomnij|pomi[ńn]",
        r"vorige|eerdere|alle|bovenstaande|je|jouw|uw|oorspronkelijke|poprzedni\w{0,3}"
        r"|wcze[śs]niejsz\w{0,3}|wszystki\w{0,3}|powy[żz]sz\w{0,3}|swoje|swoich|twoje|twoich",
        r"instructies|regels|aanwijzingen|opdrachten|instrukcj\w{0,3}|poleceni\w{0,3}"
        r"|polece[ńn]|zasad\w{0,3}|regu[łl]\w{0,3}",
    )
    + r"|\b(?:[öo]nceki|t[üu]m|b[üu]t[üu]n|yukar[ıi]daki)\s{1,3}(?:talimat|kural|komut)\w{0,8}"
    r"\s{1,3}(?:\w{1,20}\s{1,3}){0,3}?(?:yok\s{1,3}say|unut|g[öo]rmezden\s{1,3}gel"
    r"|dikkate\s{1,3}alma)"
)
_RUSSIAN = _latin(
    r"игнорируй|игнорируйте|игнорировать|проигнорируй|проигнорируйте|забудь|забудьте|забыть"
    r"|не\s{1,3}обращай\s{1,3}внимания\s{1,3}на|не\s{1,3}обращайте\s{1,3}внимания\s{1,3}на"
    r"|отбрось|отбросьте|отмени|отмените|пренебреги|не\s{1,3}следуй|не\s{1,3}следуйте"
    r"|не\s{1,3}выполняй|ігноруй|ігноруйте|забудь|забудьте",
    r"предыдущ\w{0,4}|прежн\w{0,4}|все|всё|всех|ранее|выше|вышеуказанн\w{0,4}|твои|ваши|свои"
    r"|системн\w{0,4}|изначальн\w{0,4}|исходн\w{0,4}|попередн\w{0,4}|усі|всі",
    r"инструкци\w{0,3}|указани\w{0,3}|правил\w{0,3}|команд\w{0,3}|директив\w{0,3}"
    r"|установк\w{0,3}|промпт\w{0,3}|распоряжени\w{0,3}|ограничени\w{0,3}|інструкці\w{0,3}"
    r"|вказівк\w{0,3}",
)
_CHINESE = _cjk(
    r"忽略|无视|無視|忽视|忽視|忘记|忘記|忘掉|不要理会|不要理會|不要遵守|不要遵循|不再遵守|不再遵循"
    r"|抛开|拋開|放弃|放棄|跳过|跳過|无需遵守|無需遵守|别管|別管",
    r"之前|以前|先前|上面|上述|前面|此前|所有|全部|一切|你的|系统|系統|原来|原來|原有|原始|早先|既有",
    r"指令|指示|说明|說明|规则|規則|提示词|提示詞|提示|命令|设定|設定|要求|约束|約束|限制",
)
_JAPANESE = _cjk(
    r"無視|忘れ|破棄|従わな|従うな|取り消",
    r"以前|前|これまで|上記|今まで|すべて|全て|全部|あなた|システム|最初|元|先ほど",
    r"指示|命令|ルール|指令|プロンプト|設定|制約|ガイドライン|規則|命令文",
)
_KOREAN = _cjk(
    r"무시|잊어|잊으|따르지",
    r"이전|앞의|위의|모든|기존|당신의|시스템|원래",
    r"지시|명령|규칙|지침|프롬프트|설정|제약",
    stop=".!?\\n",
)

_DECODE = (
    r"(?:translate|decode|decipher|deobfuscate|unscramble|reverse|decrypt|interpret|convert"
    r"|unpack|rot13|base64[\s-]{0,3}decode|un-?base64)"
)
_OBEY = (
    r"(?:(?:execute|follow|obey|perform|carry\s{1,3}out|act\s{1,3}on|comply\s{1,3}with"
    r"|apply|run)\s{1,3}(?:it|them|that|this|its\s{1,3}(?:instructions|commands|content)"
    r"|the\s{1,3}(?:result|results|output|translation|translated|decoded|decrypted|resulting"
    r"|instructions|commands|text|message|payload|code)|whatever|what\s{1,3}it)\b"
    r"|(?:execute|obey)\b"
    r"|do\s{1,3}(?:what|whatever|as)\s{1,3}it\s{1,3}(?:says|asks|tells|instructs|contains)"
    r"|treat\s{1,3}(?:it|them|the\s{1,3}result)\s{1,3}as\s{1,3}(?:an?\s{1,3})?(?:instructions?"
    r"|commands?|orders?))"
)
_TRANSLATE_EXECUTE = (
    rf"\b{_DECODE}{SEP}{fill(10, _DECODE)}(?:and|then|and\s{{1,3}}then|after\s{{1,3}}that"
    rf"|afterwards|next)?\s{{0,3}}(?:then\s{{1,3}})?(?:immediately\s{{1,3}})?(?:silently\s{{1,3}})?{_OBEY}"
    r"|\b(?:execute|follow|obey|run|carry\s{1,3}out|act\s{1,3}on)\s{1,3}the\s{1,3}"
    r"(?:translated|decoded|decrypted|deobfuscated|hidden|encoded)\s{1,3}(?:text|instructions?"
    r"|commands?|message|string|payload|content)\b"
    r"|\b(?:follow|execute|obey|run)\s{1,3}(?:the\s{1,3})?(?:instructions|commands|orders)"
    r"\s{1,3}(?:in|after|once)\s{1,3}(?:you\s{1,3})?(?:translating|decoding|translate|decode"
    r"|decrypting)\b"
)

#: Decoding an opaque blob straight into a shell or an evaluator.
_DECODE_PIPE = (
    r"\bbase64\s{1,3}(?:-d|--decode|-D)\b[^\n|]{0,40}\|\s{0,3}(?:sudo\s{1,3})?(?:ba|z|da)?sh\b"
    r"|\bbase64\s{1,3}(?:-d|--decode|-D)\b[^\n|]{0,40}\|\s{0,3}(?:python3?|perl|ruby|node)\b"
    r"|\beval\s{0,3}[\"'(]{0,3}\$\(\s{0,3}echo\b[^\n)]{0,300}?base64\s{1,3}(?:-d|--decode)"
    r"|frombase64string[^\n]{0,200}?(?:\biex\b|invoke-expression)"
    r"|(?:\biex\b|invoke-expression)[^\n]{0,200}?frombase64string"
    r"|\b(?:eval|exec|function)\s{0,3}\(\s{0,3}(?:atob|base64_decode|base64\.b64decode"
    r"|buffer\.from|codecs\.decode)\b"
)

RULES: Final = (
    Rule(
        "override_foreign_language",
        "override",
        "tells the model, in a language other than English, to ignore its instructions",
        EVERYWHERE,
        (
            variant(
                "|".join((_SPANISH, _FRENCH, _GERMAN, _PORTUGUESE, _ITALIAN, _OTHER_LATIN)),
                (
                    "instruc|indicacion|regla|orden|directri|pauta|norma|consign|restric|règle|regle|"
                    "directive|ordre|indication|anweisung|instruktion|regeln|vorgabe|befehl|"
                    "richtlinie|anordnung|prompt|aufforderung|einschr|instru|regra|orienta|ordens|"
                    "comand|indica|istruzion|regole|indicazion|direttiv|ordini|consegne|restrizion|"
                    "instructies|regels|aanwijzing|opdracht|instrukc|polece|zasady|reguł|regul|"
                    "talimat|kural|komut"
                ),
            ),
        ),
    ),
    Rule(
        "override_foreign_script",
        "override",
        "tells the model, in Russian, Ukrainian, Chinese, Japanese or Korean, to ignore its "
        "instructions",
        EVERYWHERE,
        (
            variant(
                _RUSSIAN,
                (
                    "инструкци|указани|правил|команд|директив|установк|промпт|распоряжени|ограничени|"
                    "інструкці|вказівк"
                ),
            ),
            variant(
                _CHINESE, "指令|指示|说明|說明|规则|規則|提示|命令|设定|設定|要求|约束|約束|限制"
            ),
            variant(_JAPANESE, "指示|命令|ルール|指令|プロンプト|設定|制約|ガイドライン|規則"),
            variant(_KOREAN, "지시|명령|규칙|지침|프롬프트|설정|제약"),
        ),
        fold=False,
    ),
    Rule(
        "override_translate_execute",
        "override",
        "asks the model to translate or decode text and then obey it",
        NOT_ALL,
        (
            variant(
                _TRANSLATE_EXECUTE,
                (
                    "transl|decod|decipher|deobfusc|unscrambl|revers|decrypt|interpret|convert|unpack|"
                    "rot13|base64|hidden|encoded"
                ),
                also="execut|follow|obey|perform|carry|act on|comply|apply|run|do what|do as|treat",
            ),
            variant(_DECODE_PIPE, "base64|atob"),
        ),
    ),
)
