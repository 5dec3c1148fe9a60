"""Typed settings with every default in one place.

Each field carries its documentation in ``metadata["doc"]``; ``docs/configuration.md`` is
generated from these classes, so the reference cannot drift from the code. Defaults follow the
seed's section 3 (hermes-agent's ``cli-config.yaml``) unless the spec says otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

TokenizerMode = Literal["auto", "tiktoken", "estimate"]
ScheduleMode = Literal["cost", "threshold"]
CacheReads = Literal["prefix", "breakpoints"]
WriteApproval = Literal["allow", "stage", "block"]
UntrustedWrites = Literal["stage", "refuse", "allow"]
SessionBackend = Literal["sqlite", "postgres"]
MemoryBackend = Literal["files", "postgres"]
RetentionBodies = Literal["compress", "drop"]


def setting(
    default: Any,
    doc: str,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    secret_env: bool = False,
) -> Any:
    """A dataclass field with its documentation and bounds; mutable defaults are copied."""
    metadata = {"doc": doc, "minimum": minimum, "maximum": maximum, "secret_env": secret_env}
    if isinstance(default, (dict, list)):
        factory = type(default)
        template = default
        return field(default_factory=lambda: factory(template), metadata=metadata)
    return field(default=default, metadata=metadata)


@dataclass
class ModelSettings:
    """The main model the host talks to."""

    name: str = setting("", "Model name; picks the tokenizer and `model_thresholds` entries.")
    context_length: int = setting(
        128_000, "Context window of the main model, in tokens.", minimum=1_024
    )
    max_tokens: int = setting(
        0, "Output reservation subtracted from the window (0: none).", minimum=0
    )
    tokenizer: TokenizerMode = setting(
        "auto",
        "`auto` uses tiktoken when its BPE data is present, else the calibrated estimate; "
        "`tiktoken` requires it; `estimate` trades exactness for speed.",
    )
    base_url: str = setting(
        "", "OpenAI-compatible endpoint of the main model (fallback for the summariser)."
    )
    api_key_env: str = setting(
        "", "Name of the environment variable holding the main model's API key.", secret_env=True
    )


@dataclass
class CompressionSettings:
    """When and how the transcript is compacted (spec 10)."""

    enabled: bool = setting(True, "Master switch for every automatic compression trigger.")
    threshold: float = setting(
        0.50,
        "Trigger at this fraction of the window. Below a 512,000-token context it is raised to "
        "0.75 (the floor): `config show` gives the effective value beside this one, and a host "
        "logs one warning when an explicit setting is raised.",
        minimum=0.05,
        maximum=0.95,
    )
    model_thresholds: dict[str, float] = setting(
        {},
        "Per-model threshold: the longest key that is a substring of the model name wins.",
        minimum=0.05,
        maximum=0.95,
    )
    threshold_tokens: int | None = setting(
        None, "Absolute cap on the trigger, in tokens (min with the fractional one).", minimum=1
    )
    target_ratio: float = setting(
        0.20,
        "Tail budget as a fraction of the threshold (clamped to 0.10-0.80).",
        minimum=0.0,
        maximum=1.0,
    )
    tail_max_tokens: int | None = setting(
        None,
        "Cap on the verbatim tail, in tokens (unset: the lean tail, 2.5% of the window within "
        "10,000-25,000; 0: no cap, `target_ratio` alone). What leaves the tail stays "
        "recallable (`session_recall`).",
        minimum=0,
    )
    protect_first_n: int = setting(
        3,
        "Non-system head messages kept verbatim; decays to 0 after the first compaction.",
        minimum=0,
    )
    protect_last_n: int = setting(
        20, "Tail message floor (at most 8 are enforced; the token budget leads).", minimum=0
    )
    min_tail_user_messages: int = setting(1, "Real user messages the tail always keeps.", minimum=0)
    max_attempts: int = setting(3, "Compression retries within one turn.", minimum=1, maximum=10)
    in_place: bool = setting(
        True, "Keep the session id (archive replaced rows) instead of starting a child session."
    )
    abort_on_summary_failure: bool = setting(
        False, "Return the input unchanged when the LLM summary fails, instead of the fallback."
    )
    min_prune_chars: int = setting(
        200, "Old tool results longer than this become one-line summaries.", minimum=0
    )
    image_tokens: int = setting(1_500, "Token cost of one image part.", minimum=0)
    proactive_prune_tokens: int = setting(
        0, "Run pruning alone once the transcript reaches this many tokens (0: off).", minimum=0
    )
    proactive_prune_min_result_chars: int = setting(
        8_000, "Proactive pruning touches only results longer than this.", minimum=0
    )
    proactive_prune_min_reclaim_tokens: int = setting(
        4_096, "Proactive pruning commits only when it reclaims at least this much.", minimum=0
    )
    progress_notices: bool = setting(
        False,
        "Emit `status` events with a short text a chat surface can show as is "
        "(compressing, compressed, failed).",
    )
    idle_compact_after_seconds: int = setting(
        0,
        "After more than this many seconds without a request, compress before the next one "
        "once the transcript is at least half the threshold: the provider's prompt cache has "
        "expired, so compacting then costs no extra cache miss (0: off).",
        minimum=0,
    )
    schedule: ScheduleMode = setting(
        "cost",
        "`cost`: also compact before the threshold, once carrying the growth since the last "
        "compaction has cost (at `cached_price`) what a compaction costs, and the prompt is at "
        "least twice what one leaves; `threshold`: only at the threshold (more context kept "
        "verbatim, a larger bill).",
    )
    cached_price: float = setting(
        0.1,
        "Price of a cached prompt token against an uncached one at your provider (0.1: "
        "Anthropic and recent OpenAI models; 1.0: no prompt caching); the cost schedule and "
        "the prune-or-summarise choice bill with it.",
        minimum=0.0,
        maximum=1.0,
    )
    cache_reads: CacheReads = setting(
        "prefix",
        "How your provider reads its prompt cache: `prefix` (OpenAI, Gemini, and Anthropic's "
        "automatic caching: any common prefix with the previous request is read from cache), "
        "`breakpoints` (Anthropic with `cache_control` marks on the system prompt and the "
        "newest messages: a change further back misses everything after the system prompt, "
        "so pruning alone keeps no cached prefix and the cost rules prefer a summary).",
    )
    cache_ttl: int = setting(
        300,
        "Seconds your provider keeps a prompt cached (300: Anthropic's default and OpenAI's "
        "usual; 3600 for a one-hour cache; 0: never assume it expired). After a longer gap "
        "the next request pays full price anyway, so the cost schedule counts a compaction "
        "then as costing only its summary.",
        minimum=0,
    )
    max_per_hour: int = setting(
        20,
        "At most this many automatic compactions before the threshold (the cost schedule, "
        "an idle gap) in any rolling hour; past it a `compression_blocked` event and none "
        "until the oldest is an hour old. A prompt at or over the threshold always compacts "
        "(0: no limit).",
        minimum=0,
    )
    min_requests_between: int = setting(
        0,
        "At most one automatic compaction before the threshold per this many requests (same "
        "exceptions as `max_per_hour`; 0 or 1: no limit, the default).",
        minimum=0,
    )
    micro_compact: bool = setting(
        False, "Not available in this version: `true` is refused (remove the key or set false)."
    )


@dataclass
class AuxiliaryCompressionSettings:
    """The summariser LLM (OpenAI-compatible chat completions)."""

    base_url: str = setting("", "Endpoint, e.g. `http://localhost:8000/v1` (empty: no LLM).")
    model: str = setting("", "Summariser model name (empty: the main model).")
    api_key_env: str = setting(
        "", "Name of the environment variable holding the API key.", secret_env=True
    )
    timeout: float = setting(60.0, "Seconds before a summary request is abandoned.", minimum=1)


@dataclass
class AuxiliarySettings:
    """Helper models, by job."""

    compression: AuxiliaryCompressionSettings = field(
        default_factory=AuxiliaryCompressionSettings, metadata={"doc": "The summariser."}
    )


@dataclass
class MemorySettings:
    """File memory, background review and the external provider (spec 20, 30)."""

    memory_enabled: bool = setting(True, "Load MEMORY.md into the prompt and allow writes to it.")
    user_profile_enabled: bool = setting(True, "Load USER.md and allow writes to it.")
    memory_char_limit: int = setting(2_200, "Size limit of MEMORY.md in characters.", minimum=1)
    user_char_limit: int = setting(1_375, "Size limit of USER.md in characters.", minimum=1)
    per_user_memory: bool = setting(
        False, "Give each user id its own MEMORY.md as well as its own USER.md."
    )
    write_approval: WriteApproval = setting(
        "allow", "`allow` writes at once, `stage` queues every write for review, `block` refuses."
    )
    untrusted_writes: UntrustedWrites = setting(
        "stage",
        "A memory or skill write whose content carries words the model read in a tool result, "
        "fetched page, @-attachment, recalled text or summary: `stage` holds it for a person "
        "(whatever `write_approval` says, except `block`), `refuse` turns it down and tells the "
        "model to ask the user, `allow` lands it and records where its words came from. One key "
        "for memory and skills. A background review's tainted or unbacked write is staged even "
        "under `allow` (refused under `refuse`).",
    )
    nudge_interval: int = setting(
        10, "User turns between background memory reviews (0: off).", minimum=0
    )
    flush_min_turns: int = setting(
        6,
        "User turns since the last review that trigger one final review on close (0: off).",
        minimum=0,
    )
    provider: str = setting("", "The one external memory provider (empty: none).")
    prefetch_timeout: float = setting(
        8.0, "Seconds an external provider may take to recall.", minimum=0.1
    )
    audit: bool = setting(
        True,
        "Keep the audit log of memory and skill writes (`$HERMES_HOME/audit/*.jsonl`, or the "
        "`hermes.memory_audit` table): who wrote what, when, from where (`memory audit`).",
    )
    audit_max_bytes: int = setting(
        5_000_000,
        "Size in bytes at which an audit file is rotated to `.1` (the older `.1` is dropped).",
        minimum=1,
    )
    backend: MemoryBackend = setting(
        "files",
        "`files` keeps MEMORY.md / USER.md under the home (one machine); `postgres` keeps them "
        "as rows in the database of `sessions.dsn`, so several hosts share one user's memory.",
    )


@dataclass
class SkillsSettings:
    """The skills library (spec 40 §3)."""

    creation_nudge_interval: int = setting(
        15, "Tool iterations between background skill reviews (0: off).", minimum=0
    )
    write_approval: WriteApproval = setting("allow", "As `memory.write_approval`, for skills.")


@dataclass
class ReferencesSettings:
    """@-references in user messages (spec 40 §5)."""

    enabled: bool = setting(
        True, "Expand `@file:`, `@folder:`, `@diff`, `@staged`, `@git:N` and `@url:` references."
    )
    allow_private_urls: bool = setting(
        False, "Let `@url:` reach loopback, link-local and private addresses."
    )
    url_timeout: float = setting(10.0, "Seconds an `@url:` fetch may take.", minimum=0.1)
    url_max_bytes: int = setting(1_000_000, "Bytes of an `@url:` response read at most.", minimum=1)
    attach_flagged_files: bool = setting(
        False,
        "Attach an `@file:` (or line range) the threat scanner flags, fenced and labelled as "
        "flagged data with a warning, instead of withholding it (a security write-up quotes "
        "attacks); folder listings, git output and `@url:` pages are withheld regardless.",
    )


@dataclass
class RetentionSettings:
    """Archiving old sessions (`hermes-context sessions retain`); metadata and summaries stay."""

    archive_after_days: int = setting(
        0,
        "Archive a session once its last message (or its start) is this many days old "
        "(0: never). Archived sessions stay listed, searchable and exportable.",
        minimum=0,
        maximum=36_500,
    )
    bodies: RetentionBodies = setting(
        "compress",
        "What archiving does to message bodies: `compress` keeps every word, compressed and "
        "still searchable (SQLite packs them with zlib; PostgreSQL already compresses long "
        "text); `drop` also removes the bodies a compaction replaced by its summary (the "
        "active view, summaries included, is kept compressed), so their words are no longer "
        "found.",
    )
    auto: bool = setting(
        True,
        "Run retention at most once a day when a host opens the store (only when "
        "`archive_after_days` is set); `false`: only `sessions retain` runs it.",
    )


@dataclass
class SessionsSettings:
    """The session store (spec 40 §1): SQLite on one machine, PostgreSQL for many."""

    enabled: bool = setting(True, "Persist sessions and messages to the store.")
    backend: SessionBackend = setting(
        "sqlite",
        "`sqlite`: the file `db_path` (one machine); `postgres`: the database of `dsn`, shared "
        "by every host (needs the `postgres` extra).",
    )
    db_path: str = setting("", "SQLite store path, relative to the home (empty: `state.db`).")
    dsn: str = setting(
        "",
        "PostgreSQL connection string without a password (`postgresql://hermes@db:5432/hermes`); "
        "give the password through libpq (`PGPASSWORD`, `~/.pgpass`) or the whole string "
        "through `dsn_env`.",
    )
    dsn_env: str = setting(
        "",
        "Name of the environment variable holding the connection string (`dsn: {$env: NAME}` "
        "sets it); wins over `dsn`.",
        secret_env=True,
    )
    pool_size: int = setting(
        4, "Most PostgreSQL connections one host process keeps open.", minimum=1, maximum=100
    )
    timeout: float = setting(
        10.0,
        "Seconds a PostgreSQL connect, a wait for a pooled connection and each statement may "
        "take before the call fails (and is retried where that is safe).",
        minimum=0.1,
        maximum=600,
    )
    retention: RetentionSettings = field(
        default_factory=RetentionSettings, metadata={"doc": "Archiving old sessions."}
    )


@dataclass
class PluginsSettings:
    """Which plugins run."""

    enabled: list[str] = setting(
        [], "Third-party plugins (entry-point names) to load; only named ones are loaded."
    )
    disabled: list[str] = setting([], "Plugins to switch off, built-ins included.")
    strict: bool = setting(False, "Re-raise plugin errors instead of isolating them.")


@dataclass
class Settings:
    """The whole configuration."""

    model: ModelSettings = field(default_factory=ModelSettings, metadata={"doc": ""})
    compression: CompressionSettings = field(
        default_factory=CompressionSettings, metadata={"doc": ""}
    )
    auxiliary: AuxiliarySettings = field(default_factory=AuxiliarySettings, metadata={"doc": ""})
    memory: MemorySettings = field(default_factory=MemorySettings, metadata={"doc": ""})
    skills: SkillsSettings = field(default_factory=SkillsSettings, metadata={"doc": ""})
    references: ReferencesSettings = field(default_factory=ReferencesSettings, metadata={"doc": ""})
    sessions: SessionsSettings = field(default_factory=SessionsSettings, metadata={"doc": ""})
    plugins: PluginsSettings = field(default_factory=PluginsSettings, metadata={"doc": ""})
    plugin_config: dict[str, dict[str, Any]] = setting(
        {}, "Free-form section per plugin, validated by that plugin; `{$env: NAME}` for secrets."
    )
