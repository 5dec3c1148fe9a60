"""Consolidation (issue 28 item 2): the planner's categories and its promises, on examples of
each kind and as properties over random blocks."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core.review.consolidation import SkillFacts, plan_memory, plan_skills
from hermes_core.review.quotes import fact_topics


def _reasons(entries: list[str], updated: list[float | None] | None = None) -> dict[str, str]:
    return {s.entry: s.reason for s in plan_memory("memory", entries, updated).steps}


def test_a_duplicate_told_another_way_goes_and_the_newer_wording_stays() -> None:
    entries = ["Deploys happen on Fridays after review", "deploy happens friday after the review"]
    plan = plan_memory("memory", entries)
    assert [(s.entry, s.kept, s.reason) for s in plan.steps] == [
        (entries[0], entries[1], "duplicate")
    ]
    # with dates, age decides, not the place in the file
    assert _reasons(entries, [200.0, 100.0]) == {entries[1]: "duplicate"}


def test_an_entry_another_already_says_goes_the_fuller_one_stays() -> None:
    entries = ["User prefers tabs for indentation in Python files", "Python indentation: tabs"]
    assert _reasons(entries) == {entries[1]: "covered"}
    # the same words are a duplicate: the older goes
    same = ["User prefers tabs for indentation in Python", "Python indentation: tabs"]
    assert _reasons(same) == {same[0]: "duplicate"}


def test_an_entry_the_user_took_back_goes_the_newer_stays() -> None:
    entries = ["User likes dark mode in the editor", "User no longer likes dark mode in the editor"]
    assert _reasons(entries) == {entries[0]: "contradicted"}
    # the other way round in time: the negation is the old one and goes
    assert _reasons(entries, [300.0, 100.0]) == {entries[1]: "contradicted"}


def test_unrelated_and_merely_similar_entries_stay() -> None:
    entries = [
        "The project uses PostgreSQL 15 in production",
        "User's name is Dana",
        "Staging runs PostgreSQL 16 with pgvector",
        "Production database backups run nightly",
    ]
    plan = plan_memory("memory", entries)
    assert plan.steps == ()
    # a negation about other words is no contradiction
    assert _reasons(["Run the tests before every commit", "Never commit secrets"]) == {}


def test_a_one_word_entry_never_covers_and_a_topicless_one_never_moves() -> None:
    assert _reasons(["tabs", "ok thanks"]) == {}
    assert _reasons(["Tabs!", "tabs"]) == {"Tabs!": "duplicate"}


def test_the_plan_is_one_batch_of_exact_removals() -> None:
    entries = ["prefers vim keybindings in the editor", "vim keybindings in the editor"]
    plan = plan_memory("user", entries)
    assert plan.operations() == [{"action": "remove", "old_text": entries[0]}]
    assert plan.to_json()["target"] == "user"


WORDS = ["tabs", "python", "deploy", "friday", "postgres", "docker", "vim", "dark", "mode"]
_entry = st.builds(
    lambda words, neg: ("never " if neg else "") + " ".join(words),
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=4),
    st.booleans(),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(_entry, max_size=9, unique=True))
def test_every_removal_has_a_keeper_that_stays_and_planning_again_finds_nothing(
    entries: list[str],
) -> None:
    plan = plan_memory("memory", entries)
    gone = {s.entry for s in plan.steps}
    left = [e for e in entries if e not in gone]
    assert len(gone) == len(plan.steps)  # each entry at most once
    for step in plan.steps:
        assert step.kept in left  # what stands for it is not removed too
        if step.reason != "contradicted":  # nothing it said is lost
            assert fact_topics(step.entry) <= fact_topics(step.kept)
    if entries:
        assert left  # a block never consolidates to nothing
    assert plan_memory("memory", left).steps == ()  # idempotent
    assert plan_memory("memory", entries) == plan  # deterministic


def test_near_duplicate_skills_fold_into_the_one_used_last() -> None:
    skills = [
        SkillFacts("deploy-app", "Deploy the app to production with docker", last_used=10.0),
        SkillFacts("app-deploy", "Deploy the application to production using docker"),
        SkillFacts("write-tests", "Write pytest tests for a module"),
    ]
    [merge] = plan_skills(skills)
    assert (merge.keep, merge.fold, merge.basis) == ("deploy-app", "app-deploy", "description")
    skills[1] = SkillFacts(skills[1].name, skills[1].description, last_used=20.0)
    assert plan_skills(skills)[0].keep == "app-deploy"


def test_a_skill_is_folded_once_and_a_kept_skill_is_never_folded() -> None:
    same = "Deploy the app to production with docker compose"
    skills = [SkillFacts(f"deploy-{i}", same, last_used=float(i)) for i in range(4)]
    merges = plan_skills(skills)
    folded = [m.fold for m in merges]
    kept = {m.keep for m in merges}
    assert len(folded) == len(set(folded)) and not kept & set(folded)
    assert "deploy-3" in kept
