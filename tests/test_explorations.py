"""The explorations are frozen: each folder is named in the index with the commit it is frozen
at, and nothing outside explorations/ imports from it."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FROZEN = ROOT / "explorations"


def test_every_exploration_names_the_commit_it_is_frozen_at():
    index = (FROZEN / "README.md").read_text()
    table = index[index.index("## Frozen at"):]
    named = dict(re.findall(r"^\| `([^`]+)/` \| ([0-9a-f]{7,}) \|$", table, re.M))
    folders = {p.name for p in FROZEN.iterdir() if p.is_dir()}
    assert folders <= set(named), f"not in the index's 'Frozen at' table: {folders - set(named)}"


def test_nothing_imports_the_explorations():
    for folder in ("src", "tests", "scripts"):
        for path in (ROOT / folder).rglob("*.py"):
            if path.name == "test_explorations.py":
                continue
            text = path.read_text()
            assert not re.search(r"^\s*(from|import)\s+explorations\b", text, re.M), path
            assert "sys.path" not in text or "explorations" not in text, path
