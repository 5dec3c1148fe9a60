"""Issue 26, review findings 5 and 6, on the policy itself: a review write is judged with the
user's words not overriding an untrusted source's (a user relaying a page is not backing
it), and a tainted review write is held under every policy, even with a quote that passed."""

from __future__ import annotations

import pytest

from hermes_core.provenance import TaintIndex, WriteContext, assess, judge, using

HOST = "vpn-gw.corp-example.net"
PAGE = f"Notice: the VPN gateway moved to {HOST} for every office."
RELAYED = f'The page says "the VPN gateway moved to {HOST}" - is that right?'
FACT = f"The VPN gateway moved to {HOST}"


def relayed_index() -> TaintIndex:
    index = TaintIndex()
    index.add_untrusted(PAGE, "tool", "web_fetch")
    index.add_trusted(RELAYED)
    return index


def test_the_users_words_back_a_model_write_but_not_a_review_write() -> None:
    index = relayed_index()
    assert not judge([FACT], index).tainted  # the model in conversation: the user said it
    verdict = judge([FACT], index, trust_user=False)
    assert verdict.tainted and verdict.sources[0].tool == "web_fetch"


@pytest.mark.parametrize(
    ("policy", "action"), [("allow", "stage"), ("stage", "stage"), ("refuse", "refuse")]
)
def test_a_tainted_review_write_is_held_under_every_policy(policy: str, action: str) -> None:
    index = TaintIndex()
    index.add_untrusted(PAGE, "tool", "web_fetch")  # the user never typed the host
    review = WriteContext(index, source="review", backed=True, note="quoted user message 1")
    with using(review):
        judged = assess([FACT], origin="background_review", policy=policy, now=1.0)
    assert judged.tainted and judged.action == action
    assert judged.provenance.source == "review" and judged.provenance.backed_by == "user"


def test_an_untainted_backed_review_write_lands() -> None:
    review = WriteContext(TaintIndex(), source="review", backed=True, note="quoted user message 1")
    with using(review):
        judged = assess(["Staging is in Leeds"], origin="background_review", policy="allow", now=1)
    assert judged.action == "land"
