"""A payload split into short writes is judged as the whole it makes, and a change to a file
is judged on the words it adds (a skill read back through ``view`` is not new words)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prov_support import fetched, fresh_prompt, make_hermes, memory, skill

from hermes_core.provenance import TaintIndex, judge
from hermes_core.provenance.added import added_texts

NEUTRAL = (
    "The accounting department has moved and all invoice questions now go to the external "
    "partner office in Lisbon which handles every payment on our behalf"
)
SKILL = "---\nname: billing\ndescription: Billing steps\n---\n# Billing\nSteps:\nEND\n"


def chunks(text: str, size: int) -> list[str]:
    words = text.split()
    return [" ".join(words[i : i + size]) for i in range(0, len(words), size)]


def test_five_word_memory_adds_are_held_after_the_first(tmp_path: Path) -> None:
    with make_hermes(tmp_path) as host:
        session = host.session("s1")
        session.prepare([{"role": "user", "content": "read the vendor page"}, *fetched(NEUTRAL)])
        results = [memory(session, c) for c in chunks(NEUTRAL, 5)]
        session.close()
        assert all(r.get("staged") for r in results[1:]), results
        assert "partner office in Lisbon" not in fresh_prompt(host).replace("\n§\n", " ")


def test_one_word_adds_land_at_most_seven_words(tmp_path: Path) -> None:
    with make_hermes(tmp_path) as host:
        session = host.session("s1")
        session.prepare([{"role": "user", "content": "read the vendor page"}, *fetched(NEUTRAL)])
        landed = [w for w in NEUTRAL.split() if not memory(session, w).get("staged")]
        assert len(landed) <= 7, landed


def test_five_word_skill_patches_are_held(tmp_path: Path) -> None:
    with make_hermes(tmp_path) as host:
        session = host.session("s0")
        session.prepare([{"role": "user", "content": "create a billing skill"}])
        assert skill(session, action="create", name="billing", content=SKILL)["success"]
        session.close()
        session = host.session("s1")
        session.prepare([{"role": "user", "content": "read"}, *fetched(NEUTRAL)])
        for piece in chunks(NEUTRAL, 5):
            skill(
                session,
                action="patch",
                name="billing",
                old_string="END",
                new_string=piece + "\nEND",
            )
    text = (tmp_path / "skills" / "billing" / "SKILL.md").read_text()
    assert chunks(NEUTRAL, 5)[0] in text and not any(c in text for c in chunks(NEUTRAL, 5)[1:])


def test_patches_in_reverse_order_are_judged_with_the_file_around_them(tmp_path: Path) -> None:
    with make_hermes(tmp_path) as host:
        session = host.session("s0")
        session.prepare([{"role": "user", "content": "create a billing skill"}])
        assert skill(session, action="create", name="billing", content=SKILL)["success"]
        session.close()
        session = host.session("s1")
        session.prepare([{"role": "user", "content": "read"}, *fetched(NEUTRAL)])
        for piece in reversed(chunks(NEUTRAL, 5)):
            new = "Steps:\n" + piece
            skill(session, action="patch", name="billing", old_string="Steps:", new_string=new)
    text = (tmp_path / "skills" / "billing" / "SKILL.md").read_text()
    assert "office in Lisbon" not in " ".join(text.split())


def test_edit_after_viewing_the_skill_is_judged_on_what_it_adds(tmp_path: Path) -> None:
    release = (
        "---\nname: release\ndescription: How we cut a release of the service\n---\n# Release\n"
        "Bump the version in pyproject, write the changelog entry under the new heading, and "
        "open a pull request titled after the version.\n"
    )
    with make_hermes(tmp_path) as host:
        session = host.session("s0")
        session.prepare([{"role": "user", "content": "save a release skill"}])
        assert skill(session, action="create", name="release", content=release)["success"]
        session.close()
        session = host.session("s1")
        messages: list[dict[str, Any]] = [{"role": "user", "content": "add: run the tests first"}]
        session.prepare(messages)
        shown = session.handle_tool_call("skill_manage", {"action": "view", "name": "release"})
        call = {
            "id": "c1",
            "type": "function",
            "function": {"name": "skill_manage", "arguments": "{}"},
        }
        messages += [
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "content": shown},
        ]
        session.prepare(messages)
        edited = release.replace("# Release\n", "# Release\nRun the tests first.\n")
        result = skill(session, action="edit", name="release", content=edited)
        assert result["success"] and not result.get("staged"), result


def test_added_texts_are_the_new_words_with_their_neighbours() -> None:
    old = "one two three four five six seven eight nine ten"
    new = "one two three four five NEW WORDS six seven eight nine ten"
    framed = "two three four five NEW WORDS six seven eight nine"
    assert added_texts(old, new) == [("NEW WORDS", framed)]
    assert added_texts(old, old) == []
    assert added_texts("", "fresh file") == [("fresh file", "fresh file")]


def test_judge_counts_a_run_that_starts_in_what_came_before() -> None:
    index = TaintIndex()
    index.add_untrusted(NEUTRAL, "tool", "web_fetch")
    first, second = chunks(NEUTRAL, 5)[:2]
    assert not judge([second], index).tainted
    assert judge([second], index, before=first).tainted
    assert not judge(["we keep our own notes"], index, before=first).tainted
