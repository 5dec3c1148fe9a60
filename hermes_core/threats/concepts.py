"""Word classes for the learned scorer: many words, many languages, one idea each.

A paraphrase swaps "guidelines" for "guardrails" and "no longer apply" for "are on
holiday"; a translation swaps every word. What stays is the shape: *your* + *rules* +
*lapse*, *secret* + *send* + *destination*, *hide* + *user*. Each word below names the
class it belongs to, so the scorer (:mod:`hermes_core.threats.features`) can weigh the
class and pairs of classes near each other, learned once for all their members.

Entries ending in ``*`` are stems (``guidel*`` covers "guideline", "guidelines"); for
scripts written without spaces an entry matches anywhere inside a run of text.
"""

from __future__ import annotations

from typing import Final

_CLASSES: Final[dict[str, str]] = {
    "you": (
        "you your yours yourself you're youre you've you'll u ur ya y'all du dich dir dein* "
        "ihr euch euer tu tú tus tuyo usted ustedes vous votre vos toi te você voce seu sua "
        "teu tua tuo tuoi ты тебя тебе твой твоя твои вы вас вам ваш ваши sen seni senin "
        "jij jouw twój twoja twoje ty 你 您 你的 あなた 君 너 당신 네"
    ),
    "rules": (
        "rule* guidel* guidance instruct* polic* principl* guardrail* restrict* limit* "
        "constrain* filter* safeguard* directiv* training alignment programming safety "
        "ethic* refusal* boundar* conduct moderation prompt* system regel* richtlin* "
        "anweisung* vorgab* einschränk* beschränk* regla* instrucci* directriz* norma* "
        "restricci* règle* consigne* directive* regra* instruç* instruc* diretriz* regol* "
        "istruzion* limitazion* правил* инструкц* указани* ограничен* настав* kural* "
        "talimat* zasad* instrukcj* regels instructies richtlijn* 规则 指令 指示 限制 准则 "
        "规定 守则 ルール 指示 制限 規則 ガイドライン 규칙 지침 제한 지시"
    ),
    "makers": (
        "developer* creator* maker* vendor* provider* lab labs company openai anthropic "
        "trained built designed programmed engineer* manufactur* entwickler* hersteller "
        "desarrollador* creador* fabricante* développeur* créateur* desenvolvedor* criador* "
        "sviluppator* creator* разработчик* создател* geliştirici* twórc* 开发者 开发 创造者 "
        "開発者 開発元 개발자"
    ),
    "lapse": (
        "longer anymore expired expire* lifted void revoked revok* suspend* obsolete "
        "outdated retired withdrawn sunset sunsetted exempt optional suggestion disabled "
        "irrelevant null invalid invalidat* gone waived waive* lapsed lapse* superseded "
        "supersed* replaced moot defunct cancel* annul* abolish* deprecat* paused pause* "
        "off-limits ungültig aufgehoben nichtig nulo nula anulad* "
        "caduc* derogad* obsolet* suspendid* annulé* caduque* révoqué* périmé* inválid* "
        "revogad* annullat* decadut* недействительн* отменен* отменён* аннулирован* "
        "geçersiz nieważn* uchylon* ongeldig vervallen 作废 无效 失效 废除 不再 撤销 無効 "
        "廃止 失効 무효 폐지"
    ),
    "dismiss": (
        "ignore* disregard* forget* forgot override* overrid* bypass* skip* overlook* "
        "circumvent* ignorier* vergiss* vergessen missachte* ignora* olvida* olvid* omite* "
        "oublie* ignorez esquece* esqueç* dimentica* игнорир* забудь* забыть "
        "пренебрег* unut* zignoruj* zapomnij* vergeet negeer 忽略 无视 忘记 無視 忘れ 무시 잊어"
    ),
    "secret": (
        "secret* credential* token* password* passwd passphrase* apikey api_key "
        "api-key key keys .env id_rsa id_ed25519 .netrc .pgpass .npmrc .pypirc kubeconfig "
        ".aws .ssh private keychain* cookies wallet* seed environ printenv env "
        "process.env os.environ git-credentials zugangsdaten passwort* anmeldedaten "
        "geheim* credencial* contraseña* clave* secreto* identifiant* mot secret* senha* "
        "credenciai* chave* credenzial* chiav* пароль* ключ* учетн* секрет* токен* şifre* "
        "hasło* haslo* wachtwoord* 密码 密钥 凭据 令牌 秘密 パスワード 認証情報 秘密鍵 "
        "トークン 비밀번호 자격"
    ),
    "send": (
        "send* sent post posts posted posting upload* forward* exfiltrat* transmit* email* "
        "e-mail* mail* "
        "share* push* paste* leak* curl wget beacon* sync* copy* export* deliver* "
        "senden sende* schick* hochlad* übermittel* weiterleit* envía* envia* enviar "
        "sube* subir manda mandá reenv* envoie* envoyer téléverse* transmet* transf* invia* "
        "inviar carica* отправ* перешл* загруз* выгруз* gönder* yükle* wyślij* wysłać "
        "prześlij* verstuur* stuur* 发送 上传 发给 传到 转发 送信 送って 送る アップロード 転送 "
        "보내 전송 업로드"
    ),
    "dest": (
        "http https url urls webhook* endpoint* server* pastebin* ngrok* requestbin* "
        "bucket* domain* address* host* inbox ip 服务器 サーバー 서버"
    ),
    "hide": (
        "hide* hidden conceal* secretly quietly silently covert* discreet* undisclosed "
        "unmentioned deny denies denied lie* lying pretend* claim* fake* made-up fabricat* "
        "mislead* cover cover-up covering omit* withhold* invisible unnoticed verschweig* "
        "heimlich* "
        "verberg* leugne* lüge* oculta* ocultar secretamente miente* niega* cacher cachez "
        "dissimul* secrètement esconde* escondid* mentir nasconde* segretamente "
        "скрой* скрыв* тайно солги* лги* отрицай* gizle* ukryj* potajemnie verberg* "
        "verzwijg* 隐瞒 隐藏 偷偷 悄悄 否认 撒谎 隠し 隠す こっそり 否定 嘘 숨기 몰래 부인"
    ),
    "user": (
        "user users user's operator* owner* human* customer* anyone "
        "someone whoever people team boss benutzer* nutzer* anwender* usuario* usuário* "
        "utilisateur* utente* пользовател* kullanıcı* użytkownik* gebruiker* 用户 使用者 "
        "ユーザー 사용자"
    ),
    "trigger": (
        "when whenever once after until codeword* keyword* trigger* "
        "dormant armed activate* sobald wenn nachdem cuando después despues quand après "
        "quando dopo когда после eğer gdy kiedy 当 之后 一旦 時 たら 후 때"
    ),
    "always": (
        "always every each startup start boot session sessions turn turns permanently "
        "forever recurring repeatedly daily hourly immer jede* jeden jedes siempre cada "
        "toujours chaque sempre ogni всегда каждый каждой каждом herkes zawsze każd* "
        "altijd elke 每次 每个 总是 永远 毎回 常に 항상 매번"
    ),
    "run": (
        "run run* execute* exec eval sh bash zsh powershell pipe invoke* launch* "
        "ausführ* führe* ejecuta* exécute* execut* esegui* выполн* запуст* çalıştır* "
        "uruchom* voer 执行 运行 実行 실행"
    ),
    "agentfile": (
        "agents.md claude.md gemini.md .cursorrules .clinerules .windsurfrules "
        "copilot-instructions.md .cursor memory.md user.md soul.md .hermes cursorrules "
        "clinerules windsurfrules"
    ),
    "persona": (
        "persona* character* mode dan jailbreak* jailbroken unfiltered unrestricted "
        "uncensored unbound unlimited unchained limitless rogue evil alter-ego "
        "dev-mode godmode 无限制 "
        "不受限制 制限なし 무제한"
    ),
    "grant": (
        "admin* root sudo approve* approval* grant* permission* privilege* access "
        "disable* elevat* whitelist* allowlist*"
    ),
    "reveal": (
        "reveal* print* show* output* dump* repeat* display* disclose* expose* recite* "
        "verbatim zeig* gib* muestra* revela* montre* affiche* révèle* mostra* rivela* "
        "покажи* выведи* раскрой* göster* pokaż* toon 显示 输出 透露 表示 出力 見せ 보여"
    ),
    "about": (
        "article* newsletter* blog* talk talks write-up writeup paper* research* "
        "researcher* red-team redteam example* demo* quiz* "
        "workshop* slide* course* lecture* thread* post-mortem postmortem incident* "
        "report* summary summarised summarized quoted quote* cve advisory advisories "
        "phishing awareness attacker* attack* payload* technique* "
        "artikel* vortrag* beispiel* bericht* schulung* artículo* charla* ejemplo* "
        "informe* ataque* article exemple* conférence* exposé* rapport* attaque* "
        "artigo* palestra* exemplo* relatório* articolo* esempio* rapporto* "
        "статья* статье доклад* пример* отчёт* отчет* атак* makale* örnek* "
        "artykuł* przykład* raport* 文章 例如 报告 示例 攻击 研修 記事 例として 報告 攻撃 "
        "기사 예시 보고서 공격"
    ),
    "model": (
        "ai assistant model agent llm bot chatbot claude gpt chatgpt gemini hermes "
        "ki asistente assistente modèle modelo modello ассистент модель ии yapay asystent "
        "助手 模型 アシスタント モデル 어시스턴트 모델"
    ),
    "money": (
        "iban* bic swift payment* payout* invoice* remittance beneficiar* payee* bank "
        "banking wire transfer* refund* reimburs* konto* überweis* rechnung* zahlung* "
        "compte* virement* paiement* rembours* factur* cuenta* pago* transferencia* reembols* "
        "btc eth bitcoin usdt metamask crypto card sort 账户 帐户 付款 转账 汇款 收款 支付"
    ),
    "contact": (
        "call* phone* hotline* helpdesk help-desk whatsapp telegram dial* support anydesk "
        "teamviewer chat llame llamar appel* anruf* 拨打 电话 客服"
    ),
    "ask": "ask ask* request* collect* pídele pide pedir demande* frag* 询问 索要 提供",
    "code": (
        "pin pins otp otps tan 2fa mfa code codes one-time verification recovery mnemonic "
        "12-word 24-word backup login logins username 验证码 口令"
    ),
    "settled": (
        "agreed understood accepted practice convention customary preferred ideal best "
        "expected considered standard decided retired whitelisted cleared selbstverständlich "
        "entendu appreciate historically"
    ),
    "change": (
        "new newer changed change* update* replac* substitut* switch* moved merged "
        "consolidated instead rather outdated désormais nouveau neue* nuevo nueva"
    ),
}


def _compile() -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
    words: dict[str, str] = {}
    stems: dict[str, str] = {}
    unspaced: dict[str, str] = {}
    for name, members in _CLASSES.items():
        for member in members.split():
            if not member.isascii() and any("\u3040" <= char <= "\ud7af" for char in member):
                unspaced.setdefault(member, name)
            elif member.endswith("*"):
                stems.setdefault(member[:-1], name)
            else:
                words.setdefault(member, name)
    return words, stems, unspaced


WORDS, STEMS, UNSPACED = _compile()
#: Stem lengths to try, longest first.
_STEM_LENGTHS: Final = tuple(sorted({len(stem) for stem in STEMS}, reverse=True))


def word_class(word: str) -> str | None:
    """The class of one lower-cased word, by the word itself or its longest listed stem."""
    found = WORDS.get(word)
    if found is not None:
        return found
    for length in _STEM_LENGTHS:
        if length <= len(word):
            found = STEMS.get(word[:length])
            if found is not None:
                return found
    return None


def _by_first_char() -> dict[str, tuple[tuple[str, str], ...]]:
    index: dict[str, list[tuple[str, str]]] = {}
    for member, name in UNSPACED.items():
        index.setdefault(member[0], []).append((member, name))
    return {char: tuple(entries) for char, entries in index.items()}


_UNSPACED_BY_FIRST: Final = _by_first_char()


def run_classes(run: str) -> list[str]:
    """The classes named inside a run of Chinese, Japanese or Korean text, in order.
    Only the entries starting with a character at hand are tried: linear in the run."""
    found: list[str] = []
    for start, char in enumerate(run):
        for member, name in _UNSPACED_BY_FIRST.get(char, ()):
            if run.startswith(member, start):
                found.append(name)
                break
    return found
