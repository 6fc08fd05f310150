"""scripts/check_site_browser.py: the course site in a real browser, offline. Its rules on
measurements run anywhere; the site itself is opened in Chromium where Chromium and Playwright
are installed (Debian: apt-get install chromium; pip install -e '.[browser]'), and those tests
skip visibly elsewhere."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

def _browser_module():
    spec = importlib.util.spec_from_file_location("check_site_browser",
                                                  ROOT / "scripts" / "check_site_browser.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _needs_chromium() -> None:
    import shutil

    if shutil.which("chromium") is None and shutil.which("chromium-browser") is None:
        pytest.skip("no Chromium here (Debian: apt-get install chromium)")
    pytest.importorskip("playwright", reason="Playwright's client is not installed: "
                        "pip install -e '.[browser]'")


def _browser_check(site: Path, out: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "scripts" / "check_site_browser.py"),
                           "--site", str(site), "--out", str(out), *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=1200)


@pytest.fixture(scope="module")
def built_site(tmp_path_factory) -> Path:
    _needs_chromium()
    site = tmp_path_factory.mktemp("site") / "site"
    _browser_module().build_site(site)
    return site


@pytest.mark.slow
def test_every_page_renders_offline_in_chromium(built_site, tmp_path):
    """scripts/check_site_browser.py on a fresh build: every page of both languages opened in
    headless Chromium at 1400 and 400 px with every other host unreachable, reveals closed and
    open; diagrams drawn, formulas typeset, nothing wider than its box, no text, formula, diagram
    or image smaller than readable, no broken anchor, the language switch there, no request to
    another host, no script error."""
    proc = _browser_check(built_site, tmp_path / "out")
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    for name in ("diagram-en", "diagram-es", "formula-en", "formula-es", "figure-en", "figure-es",
                 "formula-400-en", "formula-400-es", "diagram-400-en", "diagram-400-es"):
        assert (tmp_path / "out" / f"{name}.png").stat().st_size > 5000


# What the check must see fail, planted in a copy of the built site: a table far wider than a
# phone, a formula too long for the column, a command line cut (the stylesheet's wrapping rule
# removed), and a link to an anchor that does not exist.
PLANTED_PAGE = "phase-24-cuda-triton/lab/03-triton-softmax"
WIDE_TABLE = ("<table><tr>" + "".join(f"<th>column_{i}_of_a_wide_table</th>" for i in range(8))
              + "</tr><tr>" + "".join(f"<td><code>value_{i}_wide</code></td>" for i in range(8))
              + "</tr></table>")
LONG_FORMULA = ('<div class="arithmatex">\\[' + " + ".join(f"a_{{{i}}} b_{{{i}}}" for i in range(40))
                + "\\]</div>")
DEAD_LINK = '<p><a href="#an-anchor-nobody-wrote">a dead link</a></p>'


@pytest.mark.slow
def test_the_browser_check_fails_on_what_overflows_and_on_a_dead_anchor(built_site, tmp_path):
    import shutil

    site = tmp_path / "site"
    shutil.copytree(built_site, site)
    page = site / PLANTED_PAGE / "index.html"
    html = page.read_text(encoding="utf-8")
    assert "</article>" in html
    page.write_text(html.replace("</article>", WIDE_TABLE + LONG_FORMULA + DEAD_LINK
                                 + "</article>", 1), encoding="utf-8")
    css = site / "stylesheets" / "site.css"
    text = css.read_text(encoding="utf-8")
    assert "white-space: pre-wrap;" in text
    css.write_text(text.replace("white-space: pre-wrap;", ""), encoding="utf-8")
    proc = _browser_check(site, tmp_path / "out", "--pages", PLANTED_PAGE)
    out = proc.stdout
    assert proc.returncode == 1, out + proc.stderr[-2000:]
    phone = [line for line in out.splitlines() if line.startswith(f"  {PLANTED_PAGE}/ at 400 px")]
    assert any("table 'column_0_of_a_wide_table" in line and "hidden" in line for line in phone), out
    assert any("formula '" in line and "hidden; it scrolls with no cue" in line for line in phone), out
    assert any("code block '" in line and "python -m phase24" in line for line in phone), out
    assert f"broken anchor: {PLANTED_PAGE}/: a link to #an-anchor-nobody-wrote" in out, out


def test_overflow_rules_pass_a_small_designed_scroll_and_fail_the_rest():
    """A table may scroll sideways inside a box with a cue when it hides at most MAX_HIDDEN of
    itself; a code block, a formula, a diagram or an image wider than its box fails whatever its
    box does, as does a table with no cue or one that hides more."""
    browser = _browser_module()

    def box(kind, w, scrolls=True, cue=True):
        return {"kind": kind, "what": kind, "w": w, "box": 368, "scrolls": scrolls, "cue": cue}

    fits = [box(k, 368) for k in ("table", "code block", "formula", "diagram", "image")]
    assert browser.overflow_problems({"boxes": fits + [box("table", 420)]}) == []
    wide = [box("table", 460), box("table", 400, cue=False), box("code block", 380),
            box("formula", 623, scrolls=False), box("diagram", 500), box("image", 600)]
    problems = browser.overflow_problems({"boxes": wide})
    assert [p.split(" ")[0] for p in problems] == ["table", "table", "code", "formula", "diagram",
                                                   "image"], problems
    assert "it is cut" in problems[3] and "41% hidden" in problems[3]


def test_anchor_rule_names_a_missing_id_and_a_missing_page():
    browser = _browser_module()
    base = "http://127.0.0.1:1/"
    seen = {base + "a/": {"ids": ["top"], "links": [base + "b/#here", base + "b/#gone",
                                                       base + "c/#x", base + "x.png#y",
                                                       "https://example.org/#z"]},
            base + "b/": {"ids": ["here"], "links": [base + "a/#top"]}}
    assert browser.broken_anchors(seen, base) == [
        "a/: a link to #gone of b/, which has no such id",
        "a/: a link to c/#x, a page the site lacks"]


def test_browser_check_measures_what_a_reader_sees():
    """The size rules of scripts/check_site_browser.py, on the measurements its probe returns: a
    display formula shrunk to 1 x 1 px (what Material's mobile rule did to MathJax's SVG), a
    diagram whose labels are drawn at 6 px, and a plot drawn at a third of its width each fail; the
    same at readable sizes passes. (The probe itself runs in Chromium: the slow test above.)"""
    browser = _browser_module()
    readable = {"formulas": [{"what": "#roofline I", "w": 300, "h": 40, "px": 19.1}],
                "diagrams": [{"what": "", "w": 368, "h": 500, "px": 12.0}],
                "imgs": [{"what": "softmax_lab02.png", "w": 600, "natural": 1000, "scale": 0.6}],
                "pageScrolls": False}
    assert browser.size_problems(readable) == []
    shrunk = {"formulas": [{"what": "#roofline I", "w": 1, "h": 1, "px": 0.1}],
              "diagrams": [{"what": "", "w": 368, "h": 80, "px": 6.0}],
              "imgs": [{"what": "softmax.png", "w": 600, "natural": 1716, "scale": 0.35}],
              "pageScrolls": True}
    problems = browser.size_problems(shrunk)
    assert [p.split(" ")[0] for p in problems] == ["formula", "diagram", "image", "the"], problems
    assert browser.WIDTHS == (1400, 400)
