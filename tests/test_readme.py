"""The README's results table is the one the project's command makes from the committed JSON."""

import json
import re
from pathlib import Path

from phase24.harness.bench import markdown_table

ROOT = Path(__file__).resolve().parents[1]


def test_readme_table_comes_from_results():
    readme = (ROOT / "README.md").read_text()
    table = re.search(r"<!-- results-table:start -->\n(.*?)\n<!-- results-table:end -->", readme,
                      re.S).group(1)
    result = json.loads((ROOT / "results/h200/softmax.json").read_text())
    assert table == markdown_table(result)
    assert (ROOT / "results/h200/softmax_table.md").read_text().strip() == markdown_table(result)


def test_readme_commands_exist():
    readme = (ROOT / "README.md").read_text()
    for script in ("run.sh", "test.sh", ".ci/run", "scripts/gpu-session.sh"):
        assert script in readme and (ROOT / script).exists()


def test_minigpt_table_comes_from_results():
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "phase24", "results", "--minigpt"],
                         capture_output=True, text=True, cwd=ROOT, check=True).stdout
    assert (ROOT / "results/h200/minigpt_speed.md").read_text() == out


def test_rung_headers_match_the_committed_results():
    """Each CUDA rung's "Measured" lines are what scripts/rung_headers.py derives from
    results/h200/softmax.json."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "rung_headers.py"), "--check"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
