"""Consolidation (issue 28 item 2): the planner's categories and its promises, on examples of
each kind and as properties over random blocks."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core.review.consolidation import meaning_words, plan_memory
from hermes_core.review.skill_consolidation import SkillFacts, plan_skills


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
    entries = ["tabs for indentation", "User prefers tabs for indentation in Python files"]
    assert _reasons(entries) == {entries[0]: "covered"}
    # the newer statement is never removed as covered: the user may have said less on purpose
    assert _reasons(list(reversed(entries))) == {}
    assert _reasons(entries, [200.0, 100.0]) == {}
    # the same words in another order are not the same fact
    assert _reasons(["pytest over unittest", "unittest over pytest"]) == {}


def test_an_entry_the_user_took_back_goes_when_its_age_is_known() -> None:
    entries = ["User likes dark mode in the editor", "User no longer likes dark mode in the editor"]
    assert _reasons(entries, [100.0, 200.0]) == {entries[0]: "contradicted"}
    assert _reasons(entries, [300.0, 100.0]) == {entries[1]: "contradicted"}
    # without dates the place in the file cannot say which is newer (a replace keeps it)
    plan = plan_memory("memory", entries)
    assert plan.steps == () and plan.conflicts == ((entries[0], entries[1]),)


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("User dislikes dark mode", "User likes dark mode"),
        ("User hates YAML configs", "User likes YAML configs"),
        ("用户不喜欢深色模式", "用户喜欢深色模式"),
        ("User used to prefer tabs for indentation", "User prefers tabs for indentation"),
    ],
)
def test_turned_around_statements_are_contradictions_not_duplicates(older: str, newer: str) -> None:
    assert _reasons([older, newer], [100.0, 200.0]) == {older: "contradicted"}


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("Uses Python 3.11", "Uses Python 3.12"),
        ("Runs Node 18 in CI", "Runs Node 20 in CI"),
        ("Primary region is us-east-1", "Primary region is us-east-2"),
        ("Prefers Rust for CLI tools", "Prefers Go for CLI tools"),
        ("Product manager at Acme", "Production manager at Acme"),
        ("Wife is Anna", "Ex-wife is Anna"),
        ("Timezone UTC+2", "Timezone UTC-5"),
        ("Writes JS daily", "Writes TS daily"),
    ],
)
def test_different_facts_that_share_most_words_are_never_removed(first: str, second: str) -> None:
    assert plan_memory("memory", [first, second], [100.0, 200.0]).steps == ()
    assert plan_memory("memory", [first, second]).steps == ()


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


def test_the_plan_is_one_batch_that_removes_exact_entries_and_holds_on_to_the_keepers() -> None:
    entries = ["prefers vim keybindings in the editor", "vim keybindings in the editor"]
    plan = plan_memory("user", entries)
    assert plan.operations() == [
        {"action": "remove", "old_text": entries[0]},
        {"action": "replace", "old_text": entries[1], "content": entries[1]},
    ]
    assert plan.to_json()["target"] == "user"


WORDS = ["tabs", "python", "deploy", "friday", "postgres", "docker", "vim", "dark", "mode"]
_entry = st.builds(
    lambda words, neg: ("never " if neg else "") + " ".join(words),
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=4),
    st.booleans(),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(_entry, max_size=9, unique=True), st.booleans())
def test_every_removal_has_a_keeper_that_stays_and_planning_again_finds_nothing(
    entries: list[str], dated: bool
) -> None:
    ages = [float(i * 7 % 5) for i in range(len(entries))] if dated else None
    plan = plan_memory("memory", entries, ages)
    gone = {s.entry for s in plan.steps}
    left = [e for e in entries if e not in gone]
    assert len(gone) == len(plan.steps)  # each entry at most once
    for step in plan.steps:
        assert step.kept in left  # what stands for it is not removed too
        if step.reason != "contradicted":  # nothing it said is lost
            assert set(meaning_words(step.entry)) <= set(meaning_words(step.kept))
    if entries:
        assert left  # a block never consolidates to nothing
    left_ages = [a for e, a in zip(entries, ages, strict=True) if e in left] if ages else None
    assert plan_memory("memory", left, left_ages).steps == ()  # idempotent
    assert plan_memory("memory", entries, ages) == plan  # deterministic


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


def test_in_one_plan_a_skill_is_in_one_merge_at_most() -> None:
    """A keeper absorbing two folds at once would be written from its old text twice and
    lose the first fold's steps: the second merge waits for the next plan."""
    same = "Deploy the app to production with docker compose"
    skills = [SkillFacts(f"deploy-{i}", same, last_used=float(i)) for i in range(4)]
    merges = plan_skills(skills)
    names = [m.keep for m in merges] + [m.fold for m in merges]
    assert len(names) == len(set(names)) == 4
    assert "deploy-3" in {m.keep for m in merges}


def test_skills_with_similar_descriptions_but_different_bodies_are_not_merged() -> None:
    staging = "1. build the image 2. push to the staging registry 3. run smoke tests on staging"
    production = "1. tag the release 2. ask for approval 3. blue green switch 4. watch error rates"
    skills = [
        SkillFacts("deploy-staging", "Deploy the web app to the staging cluster", staging),
        SkillFacts("deploy-production", "Deploy the web app to the production cluster", production),
    ]
    assert plan_skills(skills) == []
