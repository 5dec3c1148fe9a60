"""The library: layout, front matter, limits, patching, deleting, the index."""

from __future__ import annotations

from pathlib import Path

import pytest
from skill_support import POISON, library, skill_md, tree

from hermes_core.skills import SkillLibrary
from hermes_core.skills.layout import MAX_SKILL_CHARS, MAX_SUPPORT_BYTES
from hermes_core.types import Finding


def test_create_list_view_in_a_category_folder(lib: SkillLibrary, root: Path) -> None:
    result = lib.create("deploy", skill_md("deploy", extra="tags: [ops, web]\n"), "devops")
    assert result["success"] and result["path"] == "devops/deploy"
    assert (root / "devops" / "deploy" / "SKILL.md").read_text() == skill_md(
        "deploy", extra="tags: [ops, web]\n"
    )
    (meta,) = lib.list()
    assert (meta.name, meta.category, meta.path, meta.tags) == (
        "deploy",
        "devops",
        "devops/deploy",
        ("ops", "web"),
    )
    view = lib.view("deploy")
    assert view["success"] and view["category"] == "devops"
    assert view["content"].startswith("---\nname: deploy\n")
    assert lib.view("devops/deploy")["success"]


def test_a_hermes_agent_home_is_read_as_it_lies(root: Path) -> None:
    """Flat and categorised skills, hidden folders, category files, metadata.hermes.tags."""
    (root / "mlops" / "axolotl" / "references").mkdir(parents=True)
    (root / "mlops" / "DESCRIPTION.md").write_text("Machine learning operations")
    (root / "mlops" / "axolotl" / "SKILL.md").write_text(
        skill_md(
            "axolotl",
            "Fine-tune LLMs with axolotl.",
            extra="version: 1.0\nlicense: MIT\nmetadata:\n  hermes:\n    tags: [fine-tuning]\n",
        )
    )
    (root / "mlops" / "axolotl" / "references" / "formats.md").write_text("dataset formats")
    (root / "git-tricks").mkdir()
    (root / "git-tricks" / "SKILL.md").write_text(skill_md("git-tricks", "Rebase safely."))
    (root / ".hub" / "cache").mkdir(parents=True)
    (root / ".hub" / "cache" / "SKILL.md").write_text(skill_md("cache"))
    lib = library(root)
    skills = {s.name: s for s in lib.list()}
    assert set(skills) == {"axolotl", "git-tricks"}
    assert skills["axolotl"].tags == ("fine-tuning",) and skills["axolotl"].version == "1.0"
    assert skills["git-tricks"].category is None
    view = lib.view("axolotl")
    assert view["linked_files"] == {"references": ["references/formats.md"]}
    assert lib.view("axolotl", "references/formats.md")["content"] == "dataset formats"


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("no front matter\n", "must start with YAML front matter"),
        ("---\nname: x\ndescription: d\nbody without closing\n", "not closed"),
        ("---\ndescription: d\n---\nbody\n", "no 'name' field"),
        ("---\nname: other\ndescription: d\n---\nbody\n", "does not match"),
        ("---\nname: Deploy\ndescription: d\n---\nbody\n", "invalid skill name"),
        ("---\nname: " + "a" * 65 + "\ndescription: d\n---\nbody\n", "at most 64"),
        ('---\nname: "dep\\u0007loy"\ndescription: d\n---\nbody\n', "control character"),
        ("---\nname: deploy\n---\nbody\n", "no 'description' field"),
        ("---\nname: deploy\ndescription: [a, b]\n---\nbody\n", "non-empty text"),
        ("---\nname: deploy\ndescription: " + "d" * 1025 + "\n---\nbody\n", "at most 1,024"),
        ("---\n- name\n- deploy\n---\nbody\n", "must be a YAML mapping"),
        ("---\njust a string\n---\nbody\n", "must be a YAML mapping"),
        ("---\nname: deploy\ndescription: d\n---\n\n  \n", "no instructions"),
        ("---\nname: deploy\ndescription: d\ndescription: e\n---\nb\n", "twice"),
        ("---\nname: deploy\ndescription: d\nx: !!binary aGk=\n---\nb\n", "explicit YAML tag"),
        ("---\nname: deploy\ndescription: d\n1: one\n---\nb\n", "keys must be text"),
        ("---\nname: deploy\ndescription: d\nx: " + "[" * 12 + "]" * 12 + "\n---\nb\n", "nested"),
        ("---\nname: deploy\ndescription: d\ntags: [1, 2]\n---\nb\n", "tags must be"),
        ("---\nname: deploy\ndescription: d\nversion: true\n---\nb\n", "version"),
        ("---\nname: deploy\ndescription: d\nplatforms: [Mac OS]\n---\nb\n", "platform"),
        ("---\nname: deploy\ndescription: d\nx: [unclosed\n---\nb\n", "not valid YAML"),
        ("---\n" + "k: v\n" * 5000 + "---\nb\n", "longer than 16,384"),
    ],
)
def test_bad_front_matter_is_refused_with_nothing_on_disk(
    lib: SkillLibrary, root: Path, text: str, needle: str
) -> None:
    result = lib.create("deploy", text)
    assert not result["success"] and needle in result["error"], result
    assert not root.exists()


def test_yaml_bombs_and_anchors_are_refused_before_anything_expands(
    lib: SkillLibrary, root: Path
) -> None:
    laughs = ["a: &a [x, x, x, x, x, x, x, x, x]"]
    laughs += [
        f"{c}: &{c} [{', '.join(['*' + p] * 9)}]"
        for p, c in zip("abcdefgh", "bcdefghi", strict=True)
    ]
    text = "---\nname: deploy\ndescription: d\n" + "\n".join(laughs) + "\n---\nbody\n"
    result = lib.create("deploy", text)
    assert not result["success"] and "anchors or aliases" in result["error"]
    merge = "---\nbase: &b {name: deploy}\n<<: *b\ndescription: d\n---\nbody\n"
    assert "anchors or aliases" in lib.create("deploy", merge)["error"]
    assert not root.exists()


def test_a_hand_made_skill_with_bad_front_matter_is_skipped_not_fatal(root: Path) -> None:
    (root / "good").mkdir(parents=True)
    (root / "good" / "SKILL.md").write_text(skill_md("good"))
    (root / "bad").mkdir()
    (root / "bad" / "SKILL.md").write_text(skill_md("not-bad"))
    (root / "Bad Name").mkdir()
    (root / "Bad Name" / "SKILL.md").write_text(skill_md("x"))
    (root / "binary").mkdir()
    (root / "binary" / "SKILL.md").write_bytes(b"---\xff\xfe\n")
    skills, problems = library(root).scan_all()
    assert [s.name for s in skills] == ["good"]
    assert {p.path for p in problems} == {"bad", "Bad Name", "binary"}
    assert "does not match" in next(p.reason for p in problems if p.path == "bad")


def test_skill_md_limit_is_100000_characters(lib: SkillLibrary, root: Path) -> None:
    head = skill_md("big", body="")
    exact = head + "x" * (MAX_SKILL_CHARS - len(head))
    assert lib.create("big", exact)["success"]
    assert lib.edit("big", exact + "y")["reason"] == "too_large"
    assert (root / "big" / "SKILL.md").read_text() == exact
    over = lib.create("bigger", skill_md("bigger", body="é" * MAX_SKILL_CHARS))
    assert over["reason"] == "too_large" and "at most 100,000" in over["error"]
    assert not (root / "bigger").exists()
    grown = lib.patch("big", "name: big\n", "name: big\nversion: '2'\n")
    assert grown["reason"] == "too_large"
    assert (root / "big" / "SKILL.md").read_text() == exact


def test_support_files_hold_at_most_one_mebibyte(lib: SkillLibrary, root: Path) -> None:
    assert lib.create("s", skill_md("s"))["success"]
    assert lib.write_file("s", "assets/data.txt", "a" * MAX_SUPPORT_BYTES)["success"]
    over = lib.write_file("s", "assets/big.txt", "é" * (MAX_SUPPORT_BYTES // 2 + 1))
    assert over["reason"] == "too_large" and "1 MiB" in over["error"]
    assert not (root / "s" / "assets" / "big.txt").exists()
    assert lib.patch("s", "a" * 10, "b" * 11, file_path="assets/data.txt")["reason"] == "multiple"
    assert lib.write_file("s", "assets/one.txt", "aaa")["success"]
    assert lib.patch("s", "aaa", "b" * (MAX_SUPPORT_BYTES + 1), "assets/one.txt")["reason"] == (
        "too_large"
    )


def test_patch_needs_exactly_one_match(lib: SkillLibrary, root: Path) -> None:
    body = "1. Run make.\n2. Run make.\n3. Check.\n"
    assert lib.create("p", skill_md("p", body=body))["success"]
    before = (root / "p" / "SKILL.md").read_bytes()
    none = lib.patch("p", "Run cargo.", "Run make.")
    assert none["reason"] == "no_match" and "not found" in none["error"]
    two = lib.patch("p", "Run make.", "Run make -j8.")
    assert two["reason"] == "multiple" and two["match_count"] == 2
    assert (root / "p" / "SKILL.md").read_bytes() == before
    assert lib.patch("p", "2. Run make.", "2. Run make -j8.")["success"]
    assert "2. Run make -j8.\n" in (root / "p" / "SKILL.md").read_text()
    broken = lib.patch("p", "name: p", "name: q")
    assert broken["reason"] == "invalid" and "does not match" in broken["error"]
    assert lib.patch("p", "3. Check.\n", "")["success"]  # '' deletes


def test_names_and_categories_never_become_paths(lib: SkillLibrary, tmp_path: Path) -> None:
    for name in ("../x", "a/b/c", "/abs", ".hidden", "UPPER", "", "x y"):
        assert not lib.create(name, skill_md(name))["success"], name
    for category in ("../..", "a/b", "/tmp", ".hub", "Cat"):
        result = lib.create("ok", skill_md("ok"), category)
        assert not result["success"] and result["reason"] == "invalid", category
    assert list(tmp_path.iterdir()) == []


def test_create_refuses_a_name_taken_anywhere_and_a_skill_as_category(lib: SkillLibrary) -> None:
    assert lib.create("deploy", skill_md("deploy"), "devops")["success"]
    assert lib.create("deploy", skill_md("deploy"))["reason"] == "exists"
    assert lib.create("deploy", skill_md("deploy"), "web")["reason"] == "exists"
    assert lib.create("lint", skill_md("lint"))["success"]
    assert "is a skill" in lib.create("fmt", skill_md("fmt"), "lint")["error"]
    assert "already exists" in lib.create("devops", skill_md("devops"))["error"]


def test_the_same_name_in_two_categories_needs_category_slash_name(root: Path) -> None:
    for category in ("a", "b"):
        (root / category / "dup").mkdir(parents=True)
        (root / category / "dup" / "SKILL.md").write_text(skill_md("dup", f"in {category}"))
    lib = library(root)
    assert "'a/dup', 'b/dup'" in lib.view("dup")["error"]
    assert lib.view("b/dup")["description"] == "in b"
    assert lib.patch("a/dup", "in a", "in A")["success"]
    assert "in A" in (root / "a" / "dup" / "SKILL.md").read_text()


def test_remove_file_and_delete_clean_up_empty_folders(lib: SkillLibrary, root: Path) -> None:
    assert lib.create("d", skill_md("d"), "cat")["success"]
    assert lib.write_file("d", "scripts/sub/run.sh", "echo hi\n")["success"]
    assert lib.remove_file("d", "scripts/sub/run.sh")["success"]
    assert not (root / "cat" / "d" / "scripts").exists()
    missing = lib.remove_file("d", "scripts/none.sh")
    assert missing["reason"] == "not_found"
    assert lib.delete("d")["success"]
    assert tree(root) == {}
    assert lib.delete("d")["reason"] == "not_found"


def test_view_of_a_missing_or_binary_support_file(lib: SkillLibrary, root: Path) -> None:
    assert lib.create("v", skill_md("v"))["success"]
    assert lib.write_file("v", "references/a.md", "A")["success"]
    (root / "v" / "assets").mkdir()
    (root / "v" / "assets" / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\xff\x00")
    missing = lib.view("v", "references/b.md")
    assert missing["reason"] == "not_found"
    assert missing["available_files"] == {
        "references": ["references/a.md"],
        "assets": ["assets/logo.png"],
    }
    binary = lib.view("v", "assets/logo.png")
    assert binary["is_binary"] and binary["size"] == 10 and "binary file" in binary["content"]
    assert lib.view("v", "SKILL.md")["content"].startswith("---")


def test_the_index_one_line_per_skill_sorted_bounded_and_platform_aware(
    lib: SkillLibrary,
) -> None:
    assert lib.index() == ""
    multi = "Use when\n  the build\n  breaks."
    assert lib.create("zeta", skill_md("zeta", "Last one."))["success"]
    assert lib.create("alpha", skill_md("alpha", f"|\n  {multi}"), "tools")["success"]
    assert lib.create("mac", skill_md("mac", "Mac only.", extra="platforms: [macos]\n"))["success"]
    lines = lib.index(platform="linux").splitlines()
    assert lines[1:] == ["alpha: Use when the build breaks.", "zeta: Last one."]
    assert "mac: Mac only." in lib.index(platform="darwin")
    for n in range(200):
        assert lib.create(f"s{n:03d}", skill_md(f"s{n:03d}", "d" * 300))["success"]
    text = lib.index(platform="linux")
    assert len(text) <= 8_000 and "more (skill_manage action 'list')" in text
    assert all(len(line) < 260 for line in text.splitlines()[1:])


def test_a_scanner_that_raises_refuses_the_write(root: Path) -> None:
    def broken(text: str) -> list[Finding]:
        raise RuntimeError("scanner down")

    lib = library(root, scan=broken)
    result = lib.create("x", skill_md("x"))
    assert result["reason"] == "threat" and result["patterns"] == ["scanner_failed"]
    assert not root.exists()


def test_the_real_scanner_refuses_a_poisoned_body_with_nothing_on_disk(
    tmp_path: Path,
) -> None:
    root = tmp_path / "skills"
    lib = SkillLibrary(root)
    result = lib.create("evil", skill_md("evil", body=POISON + "\n"))
    assert not result["success"] and result["reason"] == "threat"
    assert result["error"].startswith("Blocked: content matches threat pattern '")
    assert not root.exists() and not (tmp_path / "pending").exists()
    assert lib.create("ok", skill_md("ok"))["success"]
    before = tree(root)
    for attempt in (
        lib.edit("ok", skill_md("ok", body=POISON)),
        lib.patch("ok", "Check the health page.", POISON),
        lib.write_file("ok", "scripts/x.sh", POISON),
        lib.create("ok2", skill_md("ok2", description=POISON)),
    ):
        assert attempt["reason"] == "threat", attempt
    assert tree(root) == before


def test_a_payload_deep_in_a_long_skill_is_still_found(tmp_path: Path) -> None:
    lib = SkillLibrary(tmp_path / "skills")
    filler = "Run the tests and read the output carefully before you change anything.\n"
    head = skill_md("long", body="")
    body = filler * ((MAX_SKILL_CHARS - len(head) - len(POISON) - 10) // len(filler))
    benign = head + body
    assert len(benign) > 65_536 and lib.create("long", benign)["success"]
    poisoned = head + body[:90_000] + POISON + body[90_000:]
    assert len(poisoned) <= MAX_SKILL_CHARS
    assert lib.edit("long", poisoned)["reason"] == "threat"


def test_planted_poison_is_withheld_from_view_and_index(root: Path) -> None:
    (root / "planted").mkdir(parents=True)
    (root / "planted" / "SKILL.md").write_text(skill_md("planted", "EVIL description"))
    (root / "fine" / "references").mkdir(parents=True)
    (root / "fine" / "SKILL.md").write_text(skill_md("fine"))
    (root / "fine" / "references" / "x.md").write_text("EVIL reference")
    lib = library(root)
    view = lib.view("planted")
    assert view["reason"] == "threat" and "content" not in view
    assert "skills show planted" in view["error"]
    assert lib.view("fine", "references/x.md")["reason"] == "threat"
    assert "planted: [description withheld" in lib.index()
    assert "EVIL" not in lib.index()
