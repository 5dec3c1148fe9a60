"""Leak, role-hijack and deception requests in other languages.

The English patterns in :mod:`override` and :mod:`role` have counterparts here for
Spanish, Portuguese, French, German, Italian, Russian, Chinese, Japanese and Korean. Each
needs the same parts as in English: a verb of revealing plus a word for the system prompt
or the model's instructions; "you are now" plus a persona noun or a no-restrictions
phrase; a verb of telling plus the word for the user under a negation. Latin-script
patterns accept text with or without accents.
"""

from __future__ import annotations

from typing import Final

from hermes_core.threats.rules import Rule, variant
from hermes_core.threats.vocab import SEP, fill

_W = r"[^\n.!?;。！？]{0,16}?"  # a short stretch of the same clause (CJK has no spaces)

_LEAK_LATIN = (
    rf"\b(?:muestra|muéstrame|muestrame|revela|revélame|imprime|repite|dime|escribe|copia"
    r"|mostre|mostra|revele|imprima|repita|diga|escreva|copie|affiche|révèle|revele|montre"
    r"|répète|repete|imprime|donne|écris|ecris|recopie|zeige|gib|verrate|wiederhole|drucke"
    r"|schreibe|kopiere|mostrami|rivela|stampa|ripeti|dimmi|scrivi|copia|riporta)\b"
    rf"{SEP}{fill(6)}(?:(?:tu|tus|el|su|sus|seu|seus|o|suas|tuas|ton|tes|votre|vos|le|les|ta"
    r"|deinen|deine|dein|den|die|ihre|il|tuo|tue|le|la|tua|i|tuoi)\s{1,3})?"
    r"(?:prompt\s{1,3}(?:del|de|do|di)\s{1,3}sist[eè]ma|mensaje\s{1,3}del\s{1,3}sistema"
    r"|prompt\s{1,3}syst[èe]me|message\s{1,3}syst[èe]me|systemprompt|system-prompt"
    r"|systemanweisungen|instrucciones\s{1,3}(?:iniciales|ocultas|del\s{1,3}sistema)"
    r"|instru[çc][õo]es\s{1,3}(?:iniciais|ocultas|do\s{1,3}sistema)|instructions\s{1,3}"
    r"(?:initiales|cach[ée]es|syst[èe]me)|anweisungen|istruzioni\s{1,3}(?:iniziali|nascoste"
    r"|di\s{1,3}sistema)|tus\s{1,3}instrucciones|suas\s{1,3}instru[çc][õo]es|tes\s{1,3}"
    r"instructions|vos\s{1,3}instructions|le\s{1,3}tue\s{1,3}istruzioni)"
)
_LEAK_CYRILLIC = (
    r"\b(?:покажи|покажите|выведи|выведите|раскрой|раскройте|повтори|повторите|напиши"
    r"|напишите|распечатай|скажи|скажите|процитируй)\b[^\n.!?]{0,60}?(?:системн\w{0,4}"
    r"\s{1,3}(?:промпт|подсказк|инструкци|сообщени)\w{0,4}|(?:твои|ваши|свои|исходные"
    r"|скрытые|начальные)\s{1,3}(?:инструкци|указани|правил)\w{0,4})"
)
_LEAK_CJK = (
    rf"(?:系统提示|系統提示|提示词|提示詞|系统指令|系統指令|初始指令|系统消息|系統訊息|隐藏指令){_W}"
    r"(?:输出|輸出|显示|顯示|告诉|告訴|打印|重复|重複|复述|複述|展示|给我|給我|写出|寫出|列出|泄露|洩露)"
    rf"|(?:输出|輸出|显示|顯示|告诉我|告訴我|打印|重复|重複|复述|複述|展示|写出|寫出|列出|泄露|洩露){_W}"
    r"(?:你的)?(?:系统提示|系統提示|提示词|提示詞|系统指令|系統指令|初始指令|系统消息|系統訊息|隐藏指令)"
    rf"|(?:システムプロンプト|システムメッセージ|初期指示|隠された指示|あなたへの指示){_W}"
    r"(?:出力|表示|教え|見せ|書き出|繰り返|復唱|貼り付け|共有)"
    rf"|(?:시스템\s?프롬프트|시스템\s?메시지|초기\s?지시){_W}(?:출력|보여|알려|반복|공개)"
)

_PERSONA_LATIN = (
    r"(?:asistente|assistente|assistant|assistent|ia|ki|inteligencia|intelig[êe]ncia"
    r"|intelligence|intelligenza|modelo|modello|mod[èe]le|modell|bot|chatbot|agente|agent"
    r"|hacker|personaje|personagem|personnage|personaggio|charakter|administrador"
    r"|administrateur|administrator|amministratore|dan|sistema|syst[èe]me|version|versi[óo]n"
    r"|vers[ãa]o|versione|entidad|entidade|entit[ée]|entit[àa])"
)
_UNRESTRICTED_LATIN = (
    r"(?:sin\s{1,3}(?:ninguna\s{1,3}|ning[úu]n\s{1,3})?(?:restricci|l[íi]mite|filtro|censura)"
    r"|sem\s{1,3}(?:nenhuma\s{1,3}|nenhum\s{1,3}|qualquer\s{1,3})?(?:restri|limite|filtro"
    r"|censura)|sans\s{1,3}(?:aucune\s{1,3}|aucun\s{1,3})?(?:restriction|limite|filtre"
    r"|censure)|ohne\s{1,3}(?:jegliche\s{1,3}|irgendwelche\s{1,3})?(?:einschr[äa]nkung|grenze"
    r"|filter|zensur|regeln)|senza\s{1,3}(?:alcuna\s{1,3}|alcun\s{1,3}|nessuna\s{1,3})?"
    r"(?:restrizion|limit|filtr|censura))"
)
_ROLE_LATIN = (
    r"\b(?:(?:ahora|a\s{1,3}partir\s{1,3}de\s{1,3}ahora|desde\s{1,3}ahora)\s{0,3},?\s{0,3}"
    r"(?:t[úu]\s{1,3})?eres|(?:agora|a\s{1,3}partir\s{1,3}de\s{1,3}agora|de\s{1,3}agora"
    r"\s{1,3}em\s{1,3}diante)\s{0,3},?\s{0,3}(?:voc[êe]|tu)\s{1,3}(?:[ée]s?|ser[áa]s?)"
    r"|(?:tu\s{1,3}es|vous\s{1,3}[êe]tes)\s{1,3}(?:d[ée]sormais|maintenant|dor[ée]navant)"
    r"|(?:d[ée]sormais|[àa]\s{1,3}partir\s{1,3}de\s{1,3}maintenant|dor[ée]navant)\s{0,3},?"
    r"\s{0,3}(?:tu\s{1,3}es|vous\s{1,3}[êe]tes)|du\s{1,3}bist\s{1,3}(?:jetzt|ab\s{1,3}jetzt"
    r"|nun|von\s{1,3}nun\s{1,3}an|ab\s{1,3}sofort)|(?:ab\s{1,3}jetzt|von\s{1,3}nun\s{1,3}an"
    r"|ab\s{1,3}sofort)\s{0,3},?\s{0,3}bist\s{1,3}du|(?:ora|adesso|d['’]ora\s{1,3}in\s{1,3}poi"
    r"|da\s{1,3}ora\s{1,3}in\s{1,3}poi|da\s{1,3}adesso)\s{0,3},?\s{0,3}(?:tu\s{1,3})?sei"
    r"|finge\s{1,3}(?:que\s{1,3}eres|ser)|finja\s{1,3}(?:que\s{1,3}[ée]|ser)|fais\s{1,3}"
    r"semblant\s{1,3}d['’][êe]tre|faites\s{1,3}semblant\s{1,3}d['’][êe]tre|tu\s{1,3}so"
    r"\s{1,3}als\s{1,3}(?:ob|w[äa]rst)|fingi\s{1,3}di\s{1,3}essere|act[úu]a\s{1,3}como"
    r"|aja\s{1,3}como|atue\s{1,3}como|agis\s{1,3}comme|agissez\s{1,3}comme|verhalte\s{1,3}"
    rf"dich\s{{1,3}}wie|agisci\s{{1,3}}come|comportati\s{{1,3}}come)\b{SEP}{fill(5)}"
    rf"(?:{_PERSONA_LATIN}\b|{_UNRESTRICTED_LATIN})"
)
_ROLE_CYRILLIC = (
    r"(?:\b(?:теперь|отныне|с\s{1,3}этого\s{1,3}момента)\s{0,3},?\s{0,3}ты\b|\bпритворись\b"
    r"|\bпредставь,?\s{1,3}что\s{1,3}ты\b|\bведи\s{1,3}себя\s{1,3}как\b)[^\n.!?]{0,60}?"
    r"(?:ассистент|\bии\b|модел|бот|агент|хакер|персонаж|администратор|без\s{1,3}"
    r"(?:каких-либо\s{1,3}|всяких\s{1,3})?(?:ограничени|фильтр|цензур|правил))"
)
_ROLE_CJK = (
    rf"(?:你现在是|你現在是|从现在开始你是|從現在開始你是|从现在起你是|從現在起你是|假装你是|假裝你是|扮演){_W}"
    r"(?:助手|人工智能|AI|模型|机器人|機器人|黑客|角色|管理员|管理員|没有限制|沒有限制|不受限制|无限制|無限制)"
    rf"|(?:あなたは今から|今からあなたは|これからあなたは|あなたはもう){_W}"
    r"(?:アシスタント|AI|モデル|ボット|ハッカー|キャラクター|管理者|制限(?:の)?な|制約(?:の)?な)"
    r"|(?:になりきって|のふりをして|として振る舞って|として振舞って)"
)

_USER_LATIN = (
    r"(?:al\s{1,3}usuario|a\s{1,3}la\s{1,3}usuaria|ao\s{1,3}usu[áa]rio|[àa]\s{1,3}"
    r"l['’]utilisateur|[àa]\s{1,3}l['’]utilisatrice|dem\s{1,3}(?:benutzer|nutzer|user"
    r"|anwender)|all['’]utente)"
)
_HIDE_LATIN = (
    r"\b(?:no\s{1,3}(?:le\s{1,3})?(?:digas|cuentes|informes|menciones|reveles|muestres)"
    r"|n[ãa]o\s{1,3}(?:conte|diga|informe|mencione|revele|mostre)|ne\s{1,3}(?:dis|dites"
    r"|mentionne|mentionnez|r[ée]v[èe]le|r[ée]v[ée]lez|signale|signalez)\s{1,3}(?:rien|pas"
    r"|jamais)|non\s{1,3}(?:dire|dirlo|dirgli|raccontare|menzionare|rivelare|informare"
    rf"|avvisare))\b[^\n.!?]{{0,40}}?{_USER_LATIN}"
    r"|\b(?:sag|erz[äa]hl|verrat|verr[äa]t|teil)\w{0,2}\b[^\n.!?]{0,40}?\bdem\s{1,3}"
    r"(?:benutzer|nutzer|user|anwender)\b[^\n.!?]{0,30}?\b(?:nicht|nichts|kein\w{0,2})\b"
    r"|\b(?:sin\s{1,3}que\s{1,3}el\s{1,3}usuario|sem\s{1,3}que\s{1,3}o\s{1,3}usu[áa]rio"
    r"|sans\s{1,3}que\s{1,3}l['’]utilisateur|ohne\s{1,3}dass\s{1,3}der\s{1,3}(?:benutzer"
    r"|nutzer|user)|senza\s{1,3}che\s{1,3}l['’]utente)\b"
    r"|\b(?:oc[úu]lta\w{0,4}|esconda|escondas|cache|cachez|verheimliche|verberge|nascondi"
    r"|nascondete)\b[^\n.!?]{0,40}?(?:al\s{1,3}usuario|do\s{1,3}usu[áa]rio|[àa]\s{1,3}"
    r"l['’]utilisateur|vor\s{1,3}dem\s{1,3}(?:benutzer|nutzer)|all['’]utente)"
)
_HIDE_OTHER = (
    r"\bне\s{1,3}(?:говори|говорите|сообщай|сообщайте|рассказывай|рассказывайте|упоминай"
    r"|упоминайте|показывай)\s{1,3}(?:об\s{1,3}этом\s{1,3}|ничего\s{1,3})?пользовател"
    r"|\bскр(?:ой|ойте|ывай)\s{1,3}(?:это\s{1,3})?от\s{1,3}пользовател"
    r"|\bчтобы\s{1,3}пользователь\s{1,3}не\s{1,3}(?:узнал|заметил|увидел)"
    r"|不要告诉用户|不要告訴用戶|别告诉用户|別告訴用戶|不要让用户知道|不要讓用戶知道|瞒着用户|瞞著用戶|对用户隐瞒|對用戶隱瞞"
    r"|ユーザーに(?:は)?(?:言わ|伝え|知らせ|教え|話さ)ないで|ユーザーに(?:は)?内緒|ユーザーに気づかれ"
    r"|사용자에게\s?(?:알리지|말하지)\s?마"
)

RULES: Final = (
    Rule(
        "leak_foreign_language",
        "leak",
        "asks, in a language other than English, for the system prompt or instructions",
        variants=(
            variant(_LEAK_LATIN, "prompt|sistema|system|anweisung|instruc|instruç|istruzion"),
            variant(_LEAK_CYRILLIC, "систем|инструкци|указани|правил"),
            variant(_LEAK_CJK, "提示|指令|系统|系統|システム|指示|시스템|지시"),
        ),
        fold=False,
    ),
    Rule(
        "role_foreign_language",
        "role",
        "gives the model a new identity in a language other than English",
        variants=(
            variant(
                _ROLE_LATIN,
                (
                    "eres|você|voce|tu |vous|bist|sei|finge|finja|semblant| so |fingi|como|"
                    "comme|wie|come"
                ),
            ),
            variant(_ROLE_CYRILLIC, "ты|притвор|представь|веди себя"),
            variant(_ROLE_CJK, "你|扮演|假|あなた|なりき|ふり|振る舞|振舞"),
        ),
        fold=False,
    ),
    Rule(
        "deception_foreign_language",
        "deception",
        "asks, in a language other than English, to hide something from the user",
        variants=(
            variant(
                _HIDE_LATIN, "usuario|usuária|usuaria|utilisat|benutzer|nutzer|user|anwender|utente"
            ),
            variant(_HIDE_OTHER, "пользовател|用户|用戶|ユーザー|사용자"),
        ),
        fold=False,
    ),
)
