"""The README is short and its commands exist; the status page's tables (results/h200/softmax/
README.md) are the ones the project's command makes from the committed run beside them."""

import json
import re
from pathlib import Path

from phase24.softmax.tables import host_table, markdown_table

ROOT = Path(__file__).resolve().parents[1]
STATUS = ROOT / "results" / "h200" / "softmax"


def test_the_status_tables_come_from_the_run_beside_them():
    page = (STATUS / "README.md").read_text()
    result = json.loads((STATUS / "softmax.json").read_text())
    table = re.search(r"<!-- results-table:start -->\n(.*?)\n<!-- results-table:end -->", page,
                      re.S).group(1)
    assert table == markdown_table(result)
    loop = re.search(r"<!-- loop-table:start -->\n(.*?)\n<!-- loop-table:end -->", page,
                     re.S).group(1)
    assert loop == host_table(result)


def test_the_pages_table_comes_from_the_run_they_quote():
    result = json.loads((ROOT / "results/h200/softmax.json").read_text())
    assert (ROOT / "results/h200/softmax_table.md").read_text().strip() == markdown_table(result)


def test_the_readme_is_short_with_a_python_example():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.split()) < 1300
    example = re.search(r"```python\n(.*?)```", readme, re.S).group(1)
    assert len(example.strip().splitlines()) <= 6 and "from phase24.softmax import" in example


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


def test_host_table_shows_few_rows_beside_their_copy():
    """The few-row table: bulk shapes left out, a caller's microseconds per call (loop_us), the
    peers that ran as columns, a missing record said, and cuda's share of the copy's speed."""
    def rec(impl, m, n, loop):
        return dict(impl=impl, dtype="float32", M=m, N=n, loop_us=loop, host_us=99.0)

    result = {"peers": ["quack"], "records": [
        rec("torch", 1, 32768, 14.0), rec("cuda", 1, 32768, 8.0), rec("quack", 1, 32768, 6.0),
        rec("cuda", 2097152, 128, 500.0)],
        "copy_same_size": [dict(dtype="float32", M=1, N=32768, loop_us=4.0, host_us=99.0)]}
    lines = host_table(result).splitlines()
    assert lines[0] == "| dtype | M x N | copy | torch | cuda | triton | quack | cuda / copy |"
    assert lines[2:] == [
        "| float32 | 1x32768 | 4.0 us | 14.0 us | 8.0 us | refused | 6.0 us | 50% |"]


def test_results_markdown_prints_each_operations_own_tables():
    """`results OP --markdown`: softmax's status tables, GEMM's tables of its sweep (it printed
    softmax's for a GEMM run, a KeyError)."""
    import subprocess
    import sys

    for op, first in (("softmax", "| dtype |"), ("gemm", "| implementation |")):
        done = subprocess.run([sys.executable, "-m", "phase24", "results", op, "--markdown"],
                              cwd=ROOT, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
        assert done.stdout.startswith(first), done.stdout[:200]
    assert "`cublas`" in done.stdout and "square products" in done.stdout


def test_the_tables_the_pages_include_name_no_date_and_no_file():
    """A caption says what a table shows and on which GPU; where its numbers come from (the run,
    its date, its file) is said once a page, in its note, not under every table."""
    included = set()
    for page in (ROOT / "docs").rglob("*.md"):
        included |= set(re.findall(r'^[ \t]*--8<-- "(results/[^":]+\.md)', page.read_text(),
                                   re.M))
    assert len(included) > 10, included
    for name in sorted(included):
        text = (ROOT / name).read_text()
        assert not re.search(r"\b20\d\d-\d\d-\d\d\b|results/\S+\.json", text), name
