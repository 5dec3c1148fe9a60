"""Values and builders shared by the Mem0 tests (a module of its own: several test folders
have a conftest.py, so ``from conftest import`` would be ambiguous)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fake_mem0 import DIMS

API_KEY = "m0-test-key-not-a-secret"


def oss_config(directory: Path, url: str, api_key: Any = "loopback-only") -> dict[str, Any]:
    """Mem0 local mode for real: qdrant in path mode, embeddings from the loopback fake."""
    openai = {"api_key": api_key, "openai_base_url": f"{url}/v1"}
    return {
        "vector_store": {
            "provider": "qdrant",
            "config": {
                "path": str(directory / "qdrant"),
                "on_disk": True,
                "collection_name": "hermes_test",
                "embedding_model_dims": DIMS,
            },
        },
        "embedder": {
            "provider": "openai",
            "config": {"model": "fake-embed", "embedding_dims": DIMS, **openai},
        },
        "llm": {"provider": "openai", "config": {"model": "fake-llm", **openai}},
        "history_db_path": str(directory / "history.db"),
    }
