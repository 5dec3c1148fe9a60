#!/usr/bin/env python3
"""Session search at scale: FTS5 (BM25) against a LIKE scan of the same state.db.

1. Builds ``--messages`` (100,000) generated messages in a temporary state.db: 1,000 sessions
   of 100 messages, several users (the anonymous principal owns 40% of the sessions, as in a
   single-user home that also serves a few named users), words drawn from a 20,000-word
   vocabulary with a Zipf distribution (so queries range from rare to very common words),
   tool calls with names and JSON arguments, and 2% Chinese or Japanese messages. Reports the
   insert throughput (batches of 20 messages, one transaction each).
2. Times ``store.search`` (limit 3: the grouping by session, the snippets and the context
   lines included) for a fixed query mix: rare, medium and common words, two-word queries,
   tool names and paths, hostile syntax, and CJK queries (4 characters: trigram index; 2
   characters: LIKE), for two users. The same queries run on the same file through a store
   opened with ``fts=False`` (the LIKE fallback). p50 and p95 per engine per run; medians of
   ``--runs`` runs; the ratio LIKE / FTS is the machine-independent figure.

Prints a small table and exits 0 (1 only when the two engines disagree on which sessions a
plain one-word query finds, which would be a bug).

Usage: python bench/session_search.py [--messages N] [--runs N] [--keep DIR]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from hermes_core.sessions.sqlite import SQLiteSessionStore  # noqa: E402

SYLLABLES = [
    "ka", "ri", "to", "men", "sol", "ver", "da", "pli", "gor", "an", "tes", "lu", "mo",
    "zen", "fra", "bel", "qui", "nor", "sta", "vin", "ex", "o", "ul", "ther", "pa", "cro",
]  # fmt: skip
TOOLS = ["read_file", "write_file", "terminal", "search_files", "patch", "web_search",
         "browser_open", "memory", "skill_view", "todo_write", "git_diff", "run_tests"]  # fmt: skip
CJK = [
    "数据库连接池的配置需要调整",
    "请帮我检查一下这个测试为什么失败",
    "部署到生产环境之前先备份",
    "東京タワーの近くでミーティング",
    "このバグは再現できませんでした",
    "設定ファイルを更新してください",
]
USERS = [None, None, None, None, "alice", "bob", "carol", "dave", "erin", "frank"]
SESSION_SIZE = 100
BATCH = 20


def vocabulary(rng: random.Random, size: int) -> list[str]:
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))))
    return sorted(words, key=lambda w: (len(w), w))


def generate(rng: random.Random, words: list[str], count: int) -> list[list[dict[str, Any]]]:
    """``count`` messages as sessions of SESSION_SIZE."""
    weights = [1 / (rank + 1) ** 1.05 for rank in range(len(words))]
    sessions = []
    for s in range(count // SESSION_SIZE):
        messages: list[dict[str, Any]] = []
        for n in range(SESSION_SIZE):
            text = " ".join(rng.choices(words, weights, k=rng.randint(8, 60)))
            if rng.random() < 0.02:
                text = rng.choice(CJK) + " " + text[:40]
            if n % 4 == 2:  # an assistant turn that calls a tool, and its result
                tool = rng.choice(TOOLS)
                path = f"src/{rng.choice(words)}/{rng.choice(words)}_{s % 97}.py"
                messages.append(
                    {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {
                                "id": f"call_{s}_{n}",
                                "type": "function",
                                "function": {"name": tool, "arguments": f'{{"path": "{path}"}}'},
                            }
                        ],
                    }
                )
            elif n % 4 == 3:
                messages.append(
                    {"role": "tool", "tool_call_id": f"call_{s}_{n - 1}", "content": text}
                )
            else:
                messages.append({"role": "user" if n % 2 == 0 else "assistant", "content": text})
        sessions.append(messages)
    return sessions


def build(path: Path, sessions: list[list[dict[str, Any]]]) -> float:
    """Seconds to insert every session (batches of BATCH messages, a transaction each)."""
    store = SQLiteSessionStore(path)
    started = time.perf_counter()
    for s, messages in enumerate(sessions):
        sid = f"session-{s:05d}"
        store.open_session(sid, user_id=USERS[s % len(USERS)], title=f"generated {s}")
        for start in range(0, len(messages), BATCH):
            store.append_messages(sid, messages[start : start + BATCH])
    elapsed = time.perf_counter() - started
    store.close()
    return elapsed


def queries(words: list[str]) -> dict[str, list[str]]:
    """The query mix by kind (vocabulary ranks: 0 is the most frequent word)."""
    return {
        "rare word (rank 12,000)": words[12_000:12_008],
        "medium word (rank 400)": words[400:408],
        "common word (rank 5: in ~35% of messages)": words[5:9],
        "two words": [f"{words[30 + i]} {words[300 + i]}" for i in range(4)],
        "tool name, path, phrase": [
            "read_file",
            "run_tests",
            f"src/{words[20]}",
            f'"{words[40]} {words[41]}"',
        ],
        "hostile syntax": [f"NOT {words[50]} OR", f"content: {words[60]}*", '"unbalanced', "-k"],
        "CJK, 4+ characters (trigram)": ["数据库连接", "東京タワー"],
        "CJK, 2 characters (LIKE on CJK rows)": ["数据", "東京"],
    }


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def one_run(
    fts: SQLiteSessionStore, like: SQLiteSessionStore, mix: dict[str, list[str]]
) -> dict[str, float]:
    """Milliseconds: p50/p95 per engine over the whole mix, and the median per kind."""
    times: dict[tuple[str, str], list[float]] = {}
    for kind, qs in mix.items():
        for user in (None, "alice"):
            for query in qs:
                for name, store in (("fts", fts), ("like", like)):
                    started = time.perf_counter()
                    store.search(query, user_id=user, limit=3)
                    times.setdefault((name, kind), []).append(time.perf_counter() - started)
    figures = {}
    for name in ("fts", "like"):
        every = [t for (engine, _), ts in times.items() if engine == name for t in ts]
        figures[f"{name} p50"] = percentile(every, 0.5) * 1000
        figures[f"{name} p95"] = percentile(every, 0.95) * 1000
        for kind in mix:
            figures[f"{name} {kind}"] = statistics.median(times[(name, kind)]) * 1000
    return figures


def agree(fts: SQLiteSessionStore, like: SQLiteSessionStore, words: list[str]) -> bool:
    """Both engines find the same sessions for plain one-word queries (words that are no
    part of another word, since LIKE matches inside words and the index does not)."""
    whole = [w for w in words[1000:1400] if not any(w in o and w != o for o in words)][:10]
    for word in whole:
        a = {h.session_id for h in fts.search(word, user_id=None, limit=1000)}
        b = {h.session_id for h in like.search(word, user_id=None, limit=1000)}
        if a != b:
            print(f"engines disagree on {word!r}: {len(a)} vs {len(b)} sessions", file=sys.stderr)
            return False
    return bool(whole)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--keep", type=Path, help="build the database in DIR and keep it")
    args = parser.parse_args()
    rng = random.Random(7)
    words = vocabulary(rng, 20_000)
    sessions = generate(rng, words, args.messages)
    total = sum(len(s) for s in sessions)
    with tempfile.TemporaryDirectory() as tmp:
        directory = args.keep or Path(tmp)
        path = directory / "state.db"
        for leftover in (path, path.with_name("state.db-wal"), path.with_name("state.db-shm")):
            leftover.unlink(missing_ok=True)
        seconds = build(path, sessions)
        size = path.stat().st_size / 2**20
        fts = SQLiteSessionStore(path)
        like = SQLiteSessionStore(path, fts=False)
        mix = queries(words)
        one_run(fts, like, mix)  # warm the page cache
        runs = [one_run(fts, like, mix) for _ in range(args.runs)]
        ok = agree(fts, like, words)
        fts.close()
        like.close()
    med = {key: statistics.median(r[key] for r in runs) for key in runs[0]}
    count = sum(len(q) for q in mix.values())
    print(
        f"{total:,} messages in {len(sessions):,} sessions, {size:.0f} MiB; insert "
        f"{total / seconds:,.0f} messages/s ({seconds:.1f} s, {BATCH} a transaction)"
    )
    print(f"{count} queries x 2 users, limit 3; medians of {args.runs} runs\n")
    print("| queries | FTS5 | LIKE scan | LIKE / FTS |")
    print("|---|---|---|---|")
    for kind in mix:
        f, k = med[f"fts {kind}"], med[f"like {kind}"]
        print(f"| {kind} | {f:.1f} ms | {k:.1f} ms | {k / f:.1f}x |")
    for q in ("p50", "p95"):
        f, k = med[f"fts {q}"], med[f"like {q}"]
        print(f"| **all, {q}** | **{f:.1f} ms** | **{k:.1f} ms** | **{k / f:.1f}x** |")
    if not ok:
        print("\nthe engines disagreed on a plain query (see stderr)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
