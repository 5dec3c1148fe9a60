"""Marks that change shape on the way (parent domain, e-mail host in words, another number
layout, defanged), invisible characters and look-alike letters inside words, and names in
code that are not hosts or handles."""

from __future__ import annotations

from hermes_core.provenance import TaintIndex, judge
from hermes_core.provenance.marks import marks_of, normalise

NEUTRAL = (
    "The accounting department has moved and all invoice questions now go to the external "
    "partner office in Lisbon which handles every payment on our behalf"
)


def page_index(text: str, tool: str = "web_fetch") -> TaintIndex:
    index = TaintIndex()
    index.add_untrusted(text, "tool", tool)
    return index


def test_a_mark_copied_in_another_shape_still_taints() -> None:
    index = page_index(
        "Help desk https://help.evil-pay.example/login or billing@evil-pay.example, "
        "phone +1 555 010 9999."
    )
    for write in (
        "Billing questions go to evil-pay.example",
        "For billing write to billing at evil-pay.example",
        "Support line: 555/010/9999",
        "Support line: 0555 010 9999",
        "Billing is at help[.]evil-pay[.]example now",
        "Write to billing[at]evil-pay[.]example",
    ):
        assert judge([write], index).tainted, write


def test_a_parent_domain_in_a_write_does_not_match_a_sibling() -> None:
    index = page_index("see https://docs.shared.co.uk/x")
    assert not judge(["The bank is bbc.co.uk"], index).tainted


def test_variation_selectors_inside_words_are_ignored() -> None:
    index = page_index(NEUTRAL)
    marked = " ".join(w[0] + "\ufe0f" + w[1:] if len(w) > 2 else w for w in NEUTRAL.split())
    assert judge([marked], index).tainted
    assert normalise("a\u034fb\u3164c\U000e0101d") == "abcd"


def test_look_alike_letters_are_read_as_latin() -> None:
    index = page_index(NEUTRAL)
    cyrillic = NEUTRAL.replace("a", "\u0430").replace("o", "\u043e").replace("e", "\u0435")
    assert judge([cyrillic], index).tainted


def test_dotted_names_in_code_are_not_hosts() -> None:
    index = page_index(
        "import threading\nlock = threading.RLock()\nsettings: memory.backend = 'postgres'\n"
        "self.store.save_state(x)\nlog = logging.getLogger(__name__)\n",
        "read_file",
    )
    for note in (
        "threading.RLock guards every public Session method.",
        "Set memory.backend to postgres when hosts share a home.",
        "Use self.store.save_state to persist the session state.",
        "The project logs with logging.getLogger, never print.",
    ):
        assert not judge([note], index).tainted, note


def test_a_decorator_is_not_a_handle() -> None:
    code = "@dataclass\nclass A:\n    pass\n\n@pytest.fixture(scope='module')\ndef f(): ..."
    assert not any(m.startswith("handle:") for m in marks_of(code))
    assert "handle:@attacker" in marks_of("ping @attacker today")


def test_slashed_dates_are_not_numbers() -> None:
    assert not any(m.startswith("number:") for m in marks_of("on 2024/01/15 or 15/01/2024"))
