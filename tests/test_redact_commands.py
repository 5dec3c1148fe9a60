"""Secret shapes the review of issue 26 item 4 found missed, by category: password options of
common command-line programs (``oc``/``az``/``cf login -p``, ``openssl -pass pass:``,
``htpasswd -b``, ``net use``, ``ipmitool -P``, ``sqlplus user/pw``, ...), environment
assignments of ``*PASS`` / ``*_AUTH`` names, old HashiCorp Vault tokens, Mailgun keys,
URL-encoded credentials and quoted passwords with spaces; and the false positives it found
(a query read as credentials, prose after a password option)."""

from __future__ import annotations

import pytest

from hermes_core.redact import looks_like_secret, redact

_HEX = "0123456789abcdef" * 2

MISSED = [
    ("oc login -u dev -p 0cPassw0rd https://api.cluster:6443", "0cPassw0rd"),
    ("oc login https://api.c:6443 -u kubeadmin -p ab3Cd-EFgh", "ab3Cd-EFgh"),
    ("az login -u me@corp.com -p 'Az ure pw9'", "Az ure pw9"),
    ("cf login -a api.run -u me -p Cf9pass", "Cf9pass"),
    ("openssl enc -aes-256-cbc -pass pass:0pensslPw -in f", "0pensslPw"),
    ("openssl pkcs12 -export -passout pass:Exp0rtPw -out a.p12", "Exp0rtPw"),
    ("openssl rsa -in k.pem -passin 'pass:Quo ted9' -out k2", "Quo ted9"),
    ("htpasswd -b -c .htpasswd alice Htp4ss", "Htp4ss"),
    ("htpasswd -nbB alice Htp4ss", "Htp4ss"),
    ("SSHPASS=Ssh9pw sshpass -e ssh host", "Ssh9pw"),
    ("export SSHPASS='ssh pw 9'", "ssh pw 9"),
    ("DB_PASS=hunter2 ./run", "hunter2"),
    ("ANSIBLE_BECOME_PASS: Bec0me!", "Bec0me!"),
    ("REDISCLI_AUTH=R3dis redis-cli ping", "R3dis"),
    ("net use Z: \\\\srv\\share /user:CORP\\bob N3tPass", "N3tPass"),
    ("net use \\\\srv\\ipc$ N3tPass /user:bob", "N3tPass"),
    ("ipmitool -I lanplus -H h -U admin -P Ipm1Pass chassis status", "Ipm1Pass"),
    ("mosquitto_pub -h b -u u -P Mqtt9pw -t t -m x", "Mqtt9pw"),
    ("psexec -u admin -p Ps3xec \\\\host cmd", "Ps3xec"),
    ("xfreerdp /v:host /u:admin /p:Rdp9Pass", "Rdp9Pass"),
    ("cmdkey /add:srv /user:bob /pass:Cmdk3y", "Cmdk3y"),
    ("sqlplus scott/Tiger9@orcl", "Tiger9"),
    ("sqlplus -s scott/Tiger9 @script.sql", "Tiger9"),
    ("lftp -u bob,Lftp9pw ftp.host", "Lftp9pw"),
    ("vault login s.AbCdEfGh1jKlMnOpQrStUv9x", "s.AbCdEfGh1jKlMnOpQrStUv9x"),
    ("the token is hvs.CAESIAbCdEfGh1jKlMnOpQrStUv9x", "hvs.CAESIAbCdEfGh1jKlMnOpQrStUv9x"),
    ("mailgun key-" + _HEX + " in the config", "key-" + _HEX),
    ("https://a.b/login?next=https%3A%2F%2Fbob%3AEnc0dedPw%40host.io%2Fx", "Enc0dedPw"),
    ("redis%3a%2f%2f%3aEncPw9%40cache", "EncPw9"),
    ("curl -u 'admin:s3 cret' https://x.example", "s3 cret"),
    ('curl --user "admin:two words" https://x.example', "two words"),
    ('mongosh -u a -p "two words" --host h', "two words"),
]


@pytest.mark.parametrize(("text", "secret"), MISSED)
def test_missed_shapes_are_redacted(text: str, secret: str) -> None:
    out = redact(text)
    assert secret not in out and "[REDACTED:" in out, out
    for word in secret.split():  # no part of a spaced password is left either
        assert word not in out, out
    assert looks_like_secret(text) is not None
    assert redact(out) == out


@pytest.mark.parametrize(
    "text",
    [
        "https://x.com?email=a:b@c.d",
        "https://x.com/path?email=a:b@c.d",
        "see https://x.com#user:name@section",
        "Run docker login -u bob and then pass -p when it asks",
        "docker login -u bob registry.io -p with your token",
        "oc login -u dev -p # prompts",
        "openssl enc -pass env:MYPASS -in f",
        "openssl rsa -passin file:pw.txt -in k",
        "openssl rsa -passin stdin -in k",
        "htpasswd -c .htpasswd alice",
        "net use Z: \\\\srv\\share /persistent:yes",
        "net use Z: \\\\srv\\share * /user:bob",
        "sqlplus /nolog",
        "sqlplus / as sysdba",
        "visit s.example.com today",
        "a key-value store",
        "compass=north and bypass=true",
        "SSHPASS=$PW sshpass -e ssh host",
        "lftp -u bob ftp.host",
    ],
)
def test_look_alikes_pass(text: str) -> None:
    assert redact(text) == text


HOSTILE = {
    "encoded urls": "%3A%2F%2F" + "%3A" * 30_000,
    "encoded at signs": "%3A%2F%2Fa%3A" + "b%40" * 30_000,
    "openssl": "openssl" + " -pass pass:" * 20_000,
    "htpasswd": "htpasswd" + " -b" * 50_000,
    "net use": "net use" + " \\\\a" * 30_000,
    "net users": "net use" + " /user:a" * 30_000,
    "sqlplus": "sqlplus " + "a/" * 50_000,
    "quoted curl": "curl -u '" + "a:" * 50_000,
    "vault": "s." + "A1" * 50_000,
    "env pass": "A_PASS" * 20_000 + "=",
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_input_finishes_with_the_right_answer(name: str) -> None:
    text = HOSTILE[name]
    out = redact(text)
    assert redact(out) == out
    assert (looks_like_secret(text) is None) == (out == text)
