#!/usr/bin/env python3
"""How close the calibrated estimate is to tiktoken (o200k_base), and how much faster it is.

Categories come from the sample transcripts in tests/data/transcripts/ (prose: user/assistant
text; code: read_file results; tool JSON: call arguments and the other tool results) plus CJK
paragraphs embedded below (written for this benchmark, not the ones the estimate was calibrated
on, so that row is out of sample). Speed: median of 5 runs of each counter over each category,
as ms per MB of UTF-8 and the ratio estimate-time / tiktoken-time. Only repository files are
read.

Usage: python bench/token_accuracy.py [--transcript NAME] [--runs N]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from hermes_core.tokens import (  # noqa: E402
    TokenCounter,
    count_tokens,
    default_loader,
    get_counter,
)

CHINESE = (
    "记忆系统需要区分三类信息：用户的长期偏好、项目的约定，以及只在当前会话中有意义的临时状态。"
    "前两类可以跨会话保存，最后一类应该随着会话结束而丢弃。写入之前，每一条记忆都要检查是否与已有内容重复，"
    "是否包含密钥或个人隐私，是否像是被注入的指令。\n"
    "当用户纠正了智能体的做法，例如“以后提交代码前先运行格式化工具”，这条纠正就是最有价值的记忆之一。"
    "相反，某次命令的具体输出、临时文件的路径或者一次性的调试结论，通常不值得长期保存。"
    "检索时按相关性排序，并限制注入到系统提示中的总长度，避免记忆本身挤占上下文窗口。"
)
JAPANESE = (
    "記憶の仕組みでは、ユーザーの長期的な好み、プロジェクトの取り決め、そして現在のセッションだけで意味を持つ"
    "一時的な状態の三つを区別する必要があります。前の二つはセッションをまたいで保存できますが、最後の一つは"
    "セッションの終了とともに破棄するべきです。\n書き込む前に、既存の内容との重複、秘密情報や個人情報の有無、"
    "注入された命令のように見えないかどうかを確認します。ユーザーが「コミットの前に必ずフォーマッタを実行して」"
    "と訂正した場合、その訂正は最も価値のある記憶の一つになります。"
)


def _categories(messages: list[dict[str, Any]]) -> dict[str, str]:
    prose: list[str] = []
    code: list[str] = []
    tool_json: list[str] = []
    for m in messages:
        content = m.get("content")
        if m.get("role") in ("user", "assistant"):
            if isinstance(content, str) and content:
                prose.append(content)
            elif isinstance(content, list):
                prose.extend(p["text"] for p in content if p.get("type") == "text")
        for call in m.get("tool_calls") or []:
            tool_json.append(call["function"]["arguments"])
        if m.get("role") == "tool" and isinstance(content, str):
            if m.get("name") == "read_file":
                try:
                    code.append(json.loads(content)["content"])
                except (ValueError, KeyError, TypeError):
                    code.append(content)
            else:
                tool_json.append(content)
    return {
        "prose": "\n".join(prose),
        "code": "\n".join(code),
        "tool JSON": "\n".join(tool_json),
        "CJK": CHINESE + "\n" + JAPANESE,
    }


RUSSIAN = (
    "Система памяти должна различать долгосрочные предпочтения пользователя, договорённости "
    "проекта и временное состояние текущего сеанса. Первые два можно сохранять между сеансами, "
    "а последнее следует отбрасывать, когда сеанс заканчивается. Перед записью проверяется, нет "
    "ли дубликатов, секретов или текста, похожего на внедрённые инструкции."
)


def _out_of_sample() -> dict[str, str]:
    """Text the estimate was not fitted on: stdlib source, random data, digits, Cyrillic."""
    import argparse as stdlib_argparse
    import base64
    import hashlib
    import inspect
    import random

    rng = random.Random(7)
    return {
        "stdlib code*": inspect.getsource(stdlib_argparse),
        "base64*": base64.b64encode(rng.randbytes(30_000)).decode(),
        "hex hashes*": "\n".join(hashlib.sha256(bytes([i])).hexdigest() for i in range(256)),
        "long digits*": "".join(rng.choice("0123456789") for _ in range(20_000)),
        "Cyrillic*": RUSSIAN,
    }


def _median_seconds(fn: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _timing_text(text: str) -> str:
    """Repeat short samples to at least 1 MB so per-MB timings are not dominated by noise."""
    size = len(text.encode("utf-8"))
    return text * max(1, -(-1_000_000 // max(size, 1)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--transcript", default="coding-200turns.json")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()

    path = REPO / "tests" / "data" / "transcripts" / args.transcript
    messages: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))

    start = time.perf_counter()
    default_loader().encoding("o200k_base")
    load_ms = (time.perf_counter() - start) * 1000
    exact: TokenCounter = get_counter("gpt-4o", "tiktoken")
    estimate: TokenCounter = get_counter("gpt-4o", "estimate")
    print(f"transcript: {path.relative_to(REPO)} ({len(messages)} messages)")
    print(
        f"counters: {exact.name} (first use: verify + parse + build {load_ms:.0f} ms) vs ", end=""
    )
    print(f"{estimate.name}; timings are medians of {args.runs} runs")
    print()
    header = (
        f"{'category':<14}{'chars':>10}{'tiktoken':>10}{'estimate':>10}{'est/tik':>9}"
        f"{'tik ms/MB':>11}{'est ms/MB':>11}{'time ratio':>12}"
    )
    print(header)
    print("-" * len(header))
    samples = {**_categories(messages), **_out_of_sample()}
    for category, text in samples.items():
        tik = exact.count_text(text)
        est = estimate.count_text(text)
        timed = _timing_text(text)
        mb = len(timed.encode("utf-8")) / 1_000_000
        tik_s = _median_seconds(partial(exact.count_text, timed), args.runs)
        est_s = _median_seconds(partial(estimate.count_text, timed), args.runs)
        print(
            f"{category:<14}{len(text):>10,}{tik:>10,}{est:>10,}{est / tik:>9.3f}"
            f"{tik_s * 1000 / mb:>11.1f}{est_s * 1000 / mb:>11.2f}{est_s / tik_s:>12.4f}"
        )

    tik_total = count_tokens(messages, counter=exact)
    est_total = count_tokens(messages, counter=estimate)
    print()
    print("* out of sample: text of other kinds than the transcripts the weights were fitted on")
    print(
        f"whole transcript via count_tokens (per-message costs + framing): tiktoken {tik_total:,}, "
        f"estimate {est_total:,}, ratio {est_total / tik_total:.3f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
