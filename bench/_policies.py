"""The policies bench/session_cost.py replays: ours (and ours with one lever of issue 25 on its
own), the two real hermes-agent references, the model of 0.19, truncation and the floor."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from _hermes_refs import HermesAgent
from _replay import Message, Meter, Reference, StubServer

import hermes_core as hc
from hermes_core.compression.policy import configured_tail_budget
from hermes_core.config.loader import load_config
from hermes_core.transcript.messages import turn_groups

#: ours with the levers of issue 25 each on its own, and with neither (the policy before it)
VARIANTS: dict[str, dict[str, Any]] = {
    "ours-before": {"schedule": "threshold", "tail_max_tokens": 0},
    "ours-lean-tail": {"schedule": "threshold"},
    "ours-cost-schedule": {"tail_max_tokens": 0},
}
POLICIES = ("ours", *VARIANTS, "hermes-0.19", "hermes-0.22", "model-0.19", "truncate", "floor")
DEFAULT_POLICIES = ("ours", "hermes-0.19", "hermes-0.22")
#: Simulated time per request of "ours": a model call plus its tools in an agent loop.
SECONDS_PER_REQUEST = 30.0


class Ours:
    """The library through ``Hermes.session()``, called as docs/hosts.md says a host does."""

    name = "ours"

    def __init__(
        self,
        system: Message,
        window: int,
        stub: StubServer,
        compression: dict | None = None,
        *,
        review: bool = False,
        seconds_per_request: float = SECONDS_PER_REQUEST,
    ) -> None:
        self._home = tempfile.TemporaryDirectory()
        config = {
            "model": {"context_length": window},
            "auxiliary": {"compression": {"base_url": stub.base_url, "model": "stub"}},
            "compression": compression or {},
            # the background review (memory and skill nudges) asks the same auxiliary model;
            # the reference model replays compaction only, so the review is off here and its
            # own cost is measured apart (--review)
            "memory": {"nudge_interval": 0 if not review else 10, "flush_min_turns": 0},
            "skills": {"creation_nudge_interval": 0 if not review else 15},
        }
        self.host = hc.Hermes(load_config(config, home=self._home.name, environ={}))
        self.session = self.host.session("replay", on_event=self._event)
        # simulated time, seconds_per_request a request: the frequency limits and cooldowns
        # see the hours a real session of this length takes, not the seconds a replay takes
        self._now, self._step = 0.0, seconds_per_request
        self.session.compressor.use_clock(lambda: self._now)
        self.threshold = self.session.compressor.threshold_tokens
        self.messages = [{**system, "content": self.session.system_prompt(system["content"])}]
        self.counts = {"compressed": 0, "pruned": 0}
        self._status = ""

    def _event(self, event: hc.SessionEvent) -> None:
        if event.kind == "compression_finished":
            self._status = str(event.data.get("status"))
        elif event.kind == "compaction_committed" and self._status in self.counts:
            self.counts[self._status] += 1

    def append(self, message: Message) -> None:
        self.messages.append(message)

    def prepare(self) -> list[Message]:
        self._now += self._step
        return self.session.prepare(self.messages)

    def usage(self, tokens: int) -> None:
        self.session.record_usage({"prompt_tokens": tokens, "completion_tokens": 0})

    def end_turn(self) -> None:
        self.session.end_turn(self.messages)

    def close(self) -> None:
        self.session.close()
        self.host.close()
        self._home.cleanup()


class Truncate:
    """Drop the oldest turn groups until the request is under the threshold."""

    name = "truncate"

    def __init__(self, system: Message, threshold: int, meter: Meter, keep: int = 0) -> None:
        self.messages, self.threshold, self.meter = [system], threshold, meter
        self.keep = keep or threshold  # cut to under this once the threshold is reached
        self.counts = {"compressed": 0, "pruned": 0}

    def append(self, message: Message) -> None:
        self.messages.append(message)

    def prepare(self) -> list[Message]:
        total = self.meter.total(self.messages)
        if total >= self.threshold:
            cut = 1
            for group in turn_groups(self.messages)[1:-1]:
                if total < self.keep:
                    break
                total -= sum(len(self.meter.ids(m)) for m in self.messages[group.start : group.end])
                cut = group.end
            self.messages = [self.messages[0], *self.messages[cut:]]
            self.counts["compressed"] += 1
        return self.messages

    def usage(self, tokens: int) -> None:
        pass

    def end_turn(self) -> None:
        pass

    def close(self) -> None:
        pass


def make_policy(
    name: str,
    transcript: list[Message],
    path: Path,
    window: int,
    *,
    stub: StubServer,
    meter: Meter,
    compression: dict[str, Any],
    review: bool = False,
) -> Any:
    """A fresh policy of ``name`` for one replay."""
    if name == "ours" or name in VARIANTS:
        ours = Ours(
            transcript[0], window, stub, {**compression, **VARIANTS.get(name, {})}, review=review
        )
        ours.name = name
        return ours
    if name.startswith("hermes-"):
        return HermesAgent(
            name, transcript, path, window, stub.base_url, seconds_per_request=SECONDS_PER_REQUEST
        )
    policy: Any
    if name == "model-0.19":
        policy = Reference(transcript[0], window, stub, meter)
    else:
        compressor = hc.Compressor(context_length=window)
        threshold = compressor.threshold_tokens
        comp = compressor.settings.compression
        keep = configured_tail_budget(comp, threshold, window) if name == "floor" else 0
        policy = Truncate(transcript[0], threshold, meter, keep)
    policy.name = name
    return policy
