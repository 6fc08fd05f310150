"""The course site's offline and list checks (docs/overrides/hooks/site.py, run by every
``mkdocs build`` as a hook, so that ``--strict`` fails on what they find).

(a) list_problems flags exactly the list patterns that Python-Markdown renders wrongly: each case
    below is also rendered with the site's Markdown extensions, and the test asserts that the
    flagged cases do render wrongly and the clean ones do not, so the checker cannot drift from the
    renderer it stands in for.
(b) offline_problems flags every resource a built page would load from another host (scripts,
    stylesheets, fonts, images, frames, CSS url() and @import), and local ones the site lacks,
    while links to other sites (<a href>) stay allowed.
(c) The site is wired for offline use: theme.font is false, no extra script or stylesheet has a
    host, the hook is configured, MathJax and Mermaid are in docs/assets/vendor/, and the
    built site (one strict build) passes the scan and holds the figures the pages embed.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path, PurePosixPath

import pytest

ROOT = Path(__file__).resolve().parents[1]
HOOK = ROOT / "docs" / "overrides" / "hooks" / "site.py"


def _load_hook():
    if importlib.util.find_spec("mkdocs") is None:
        pytest.skip("the docs stack is not installed; install it with: pip install -e '.[docs]'")
    spec = importlib.util.spec_from_file_location("site_hook", HOOK)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def hook():
    return _load_hook()


def render(text: str) -> str:
    markdown = pytest.importorskip("markdown")
    return markdown.markdown(text, extensions=[
        "admonition", "attr_list", "md_in_html", "pymdownx.details", "pymdownx.superfences",
        "pymdownx.tabbed"], extension_configs={"pymdownx.tabbed": {"alternate_style": True}})


# ----------------------------------------------------------------------------------------------
# (a) lists: (source, patterns expected, what the rendering shows when it goes wrong)

WRONG = {
    "after-paragraph": (
        "Steps:\n- one\n- two\n",
        ["after-paragraph", "after-paragraph"],
        lambda html: "<li>" not in html),
    "after-paragraph-numbered": (
        "1. first\n\n   text indented three spaces\n2. second\n",
        ["short-continuation", "after-paragraph"],
        lambda html: "2. second" in html),
    "sub-bullets-at-3": (  # PLAN section 4 as it was: sub-bullets under "4." at 3 spaces
        "1. parent:\n   - child a\n   - child b\n2. next\n",
        ["indent", "indent"],
        lambda html: "<ul>" not in html),
    "sub-bullets-at-2": (
        "- parent\n  - child\n",
        ["indent"],
        lambda html: html.count("<ul>") == 1),
    "fence-at-3-in-item": (  # lab 00's exercise 3 as it was: its fence and sentence at 3 spaces
        "1. build:\n\n   ```bash\n   make\n   ```\n\n   Then compare.\n2. time it\n",
        ["short-continuation", "short-continuation", "after-paragraph"],
        lambda html: "2. time it" in html),
    "numbered-after-nested-list": (  # items after a nested list and a short paragraph
        "1. a\n    - x\n\n   note\n2. b\n3. c\n",
        ["short-continuation", "after-paragraph", "after-paragraph"],
        lambda html: "3. c" in html),
}

RIGHT = {
    "blank-line-before-list": "Steps:\n\n- one\n- two\n",
    "nested-at-4": "1. parent:\n    - child a\n    - child b\n2. next\n",
    "fence-at-4-in-item": "1. build:\n\n    ```bash\n    make\n    ```\n\n    Then compare.\n\n2. time it\n",
    "lazy-continuation": "- item one\ncontinues here\n- item two\n",
    "heading-then-list": "## Heading\n- one\n- two\n",
    "list-in-admonition": "!!! note\n\n    Text:\n\n    - one\n    - two\n",
    "number-in-wrapped-line": "The rows were 131072 and\n262144. The rest is prose.\n",
    "code-fence-content": "```text\nline\n- not a list\n  - nor this\n```\n",
    "table-then-text": "| a | b |\n|---|---|\n| 1 | 2 |\n",
}


@pytest.mark.parametrize("name", sorted(WRONG))
def test_list_checker_flags_what_renders_wrongly(hook, name):
    source, expected, broken = WRONG[name]
    assert [p for _, p, _ in hook.list_problems(source)] == expected
    assert broken(render(source)), f"{name}: Python-Markdown renders this case correctly after all"


@pytest.mark.parametrize("name", sorted(RIGHT))
def test_list_checker_accepts_what_renders_right(hook, name):
    source = RIGHT[name]
    assert hook.list_problems(source) == []
    html = render(source)
    assert not re.search(r"<p>[^<]*\n(?:- |\d+\. )(?!The rest)", html), html


def test_list_checker_gives_line_numbers(hook):
    assert hook.list_problems("# T\n\nText\n- a\n") == [(4, "after-paragraph", "- a")]


# ----------------------------------------------------------------------------------------------
# (b) offline


def test_offline_checker_flags_every_external_load(hook):
    html = """<html><head>
    <link rel="preconnect" href="https://fonts.gstatic.com" crossorigin>
    <link rel="stylesheet" href="https://fonts.googleapis.com/css?family=Roboto">
    <link rel="stylesheet" href="//cdn.example.org/x.css">
    <script src="https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-mml-chtml.js"></script>
    <style>@import "https://example.org/a.css"; @font-face { src: url(https://example.org/f.woff2) }</style>
    </head><body>
    <img src="http://example.org/plot.png" srcset="a.png 1x, https://example.org/b.png 2x">
    <iframe src="https://example.org/embed"></iframe>
    <div style="background: url('https://example.org/bg.png')"></div>
    <a href="https://arxiv.org/abs/1805.02867">a link to read elsewhere is fine</a>
    <link rel="alternate" href="../es/" hreflang="es">
    </body></html>"""
    problems = hook.offline_problems(html, PurePosixPath("index.html"))
    hosts = sorted(p.split(" loads ")[1].split(" ")[0] for p in problems)
    assert hosts == sorted([
        "https://fonts.gstatic.com", "https://fonts.googleapis.com/css?family=Roboto",
        "//cdn.example.org/x.css", "https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-mml-chtml.js",
        "https://example.org/a.css", "https://example.org/f.woff2", "http://example.org/plot.png",
        "https://example.org/b.png", "https://example.org/embed", "https://example.org/bg.png"])


def test_offline_checker_flags_missing_local_files(hook, tmp_path):
    (tmp_path / "assets").mkdir()
    (tmp_path / "assets" / "here.js").write_text("")
    (tmp_path / "es" / "page").mkdir(parents=True)
    html = ('<script src="../../assets/here.js"></script><script src="../../assets/gone.js"></script>'
            '<img src="data:image/png;base64,AAAA">')
    problems = hook.offline_problems(html, PurePosixPath("es/page/index.html"), tmp_path)
    assert problems == ["<script> loads ../../assets/gone.js, which the site does not have"]


def test_stylesheet_checker(hook):
    css = "@font-face{src:url(../fonts/a.woff2)} .x{background:url(https://example.org/y.png)}"
    assert hook.stylesheet_problems(css) == ["stylesheet loads https://example.org/y.png from another host"]


# ----------------------------------------------------------------------------------------------
# (c) the site as configured and built


def _mkdocs_yml() -> str:
    return (ROOT / "mkdocs.yml").read_text(encoding="utf-8")


def test_config_is_offline():
    cfg = _mkdocs_yml()
    assert re.search(r"^  font: false$", cfg, re.M), "theme.font must be false (no web fonts)"
    assert "docs/overrides/hooks/site.py" in cfg, "the offline and list hook is not configured"
    extras = re.findall(r"^extra_(?:javascript|css):\n((?:  - .*\n)+)", cfg, re.M)
    assert not any("//" in line for block in extras for line in block.splitlines())


def test_vendor_assets_are_installed():
    vendor = ROOT / "docs" / "assets" / "vendor"
    for path in ("mathjax/tex-svg-full.js", "mermaid/mermaid.min.js"):
        assert (vendor / path).is_file(), (
            f"docs/assets/vendor/{path} is missing: run bash scripts/site_assets.sh")


def test_build_refuses_to_run_without_the_offline_assets(hook, tmp_path):
    from mkdocs.exceptions import PluginError

    class Config:
        docs_dir = str(tmp_path)

    with pytest.raises(PluginError, match="scripts/site_assets.sh"):
        hook.on_config(Config())


def test_built_site_is_offline_and_has_its_figures(hook, tmp_path):
    site = tmp_path / "site"
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-f",
                           str(ROOT / "mkdocs.yml"), "-d", str(site)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    pages = sorted(site.rglob("*.html"))
    assert len(pages) > 20
    problems = [f"{p.relative_to(site)}: {x}" for p in pages
                for x in hook.offline_problems(p.read_text(encoding="utf-8"),
                                               PurePosixPath(p.relative_to(site).as_posix()), site)]
    assert not problems, "\n".join(problems)
    mermaid_pages = [p for p in pages if 'class="mermaid"' in p.read_text(encoding="utf-8")]
    math_pages = [p for p in pages if 'class="arithmatex"' in p.read_text(encoding="utf-8")]
    assert mermaid_pages and math_pages
    for p in mermaid_pages:
        assert "assets/vendor/mermaid/mermaid.min.js" in p.read_text(encoding="utf-8"), p
    for p in math_pages:
        assert "assets/vendor/mathjax/tex-svg-full.js" in p.read_text(encoding="utf-8"), p
    for png in (ROOT / "results" / "h200").glob("*.png"):
        assert (site / "assets" / "results" / "h200" / png.name).read_bytes() == png.read_bytes()


def test_each_language_includes_its_own_generated_tables():
    """A Spanish page includes the Spanish tables (µs, decimal comma, Spanish headers), an English
    page the English ones; scripts/rung_headers.py writes both from the same JSON."""
    docs = ROOT / "docs"
    include = re.compile(r'^--8<-- "(results/[^"]+\.md)"', re.M)
    wrong = []
    for page in sorted(docs.rglob("*.md")):
        spanish = page.name.endswith(".es.md")
        for path in include.findall(page.read_text(encoding="utf-8")):
            if path.endswith(".es.md") != spanish:
                wrong.append(f"{page.relative_to(docs)} includes {path}")
    assert not wrong, "\n".join(wrong)


def test_spanish_tables_are_localised():
    results = ROOT / "results" / "h200"
    for name in ("softmax_table.es.md", "triton_ladder.es.md"):
        text = (results / name).read_text(encoding="utf-8")
        assert " us" not in text and "µs" in text, name
        assert not re.search(r"\d\.\d", text.split("(results/")[0]), f"{name}: a decimal point"
        assert "copy" not in text, f"{name}: an English header"


# ----------------------------------------------------------------------------------------------
# (d) the two routes and the glossary

ROUTES = ROOT / "docs" / "phase-24-cuda-triton" / "routes"
RUN_TESTED = [ROOT / "README.md", ROOT / "docs" / "index.md"] + sorted(
    p for folder in ("lab", "solutions") for p in (ROOT / "docs" / "phase-24-cuda-triton" / folder).glob("*.md")
    if not p.name.endswith(".es.md"))  # the pages whose commands tests/test_lab_commands.py runs


def _bash_commands(text: str) -> list[str]:
    out, in_bash = [], False
    for line in text.splitlines():
        fence = re.match(r"^\s*```(\w*)", line)
        if fence:
            in_bash = not in_bash and fence[1] == "bash"
            continue
        if in_bash and line.strip():
            # the command itself: comment and leading VAR=value words (an environment) removed
            words = line.split("#", 1)[0].split()
            while words and re.match(r"^[A-Z_][A-Z0-9_]*=", words[0]):
                words.pop(0)
            out.append(" ".join(words))
    return out


def test_route_commands_are_run_where_the_lab_tests_them():
    """Each lab command on a route page is one that the lab-commands test runs from a lab, the
    solutions, the README or the home page, so a route cannot show a command nobody runs."""
    tested = {c for page in RUN_TESTED for c in _bash_commands(page.read_text(encoding="utf-8"))}
    shown = [(page.name, c) for page in sorted(ROUTES.glob("*.md")) if not page.name.endswith(".es.md")
             for c in _bash_commands(page.read_text(encoding="utf-8"))
             if c.startswith(("python -m phase24", "nvcc"))]
    assert len(shown) >= 15
    untested = [f"{page}: {c}" for page, c in shown if c not in tested]
    assert not untested, "route commands no lab page shows:\n" + "\n".join(untested)


def test_gpu_route_names_real_steps():
    script = (ROOT / "scripts" / "gpu-session.sh").read_text(encoding="utf-8")
    steps = set(re.findall(r"^\s{4}([a-z-]+)\)", script, re.M))
    text = (ROUTES / "hopper-30-minutes.md").read_text(encoding="utf-8")
    for c in _bash_commands(text):
        if c.startswith("bash scripts/gpu-session.sh"):
            asked = c.split()[3:]
            assert asked and set(asked) <= steps, (asked, sorted(steps))


# Spanish forms the glossary rejects, with the form its pages use instead.
REJECTED = {
    r"\blibrer[ií]as?\b": "biblioteca",
    r"\brejillas?\b": "*grid*",
    r"\bformas?\s+masivas?\b": "formas grandes",
    r"\ben\s+bruto\b": "sin convertir",
    r"\bregistrador\b": "(autograd anota cada operación)",
    r"\bque\s+muerden\b": "tolerancias estrictas",
    # issue 32: a mistranslation and calques
    r"\benteros\s+pequeños\s+y\s+medios\b": "enteros pequeños y mitades",
    r"\b(?:la|las)\s+guardas?\s+(?:`|del\s+kernel)|\bquita\s+la\s+guarda\b": "comprobación de límites",
    r"\ben\s+el\s+sitio\b": "*in situ*",
    r"\bLo\s+que\s+midió\b": "La medida",
    r"\bvolcados?\b": "*spill*",
    r"\bderram\w*": "*spill*",
    r"\bdespach\w*": "*dispatcher* (PyTorch) o selector (`rows_best`)",
    r"\d%": "un espacio (de no separación) antes de %",
}


def test_spanish_pages_use_the_glossary_terms():
    docs = ROOT / "docs"
    found = []
    for page in sorted(docs.rglob("*.es.md")):
        text = page.read_text(encoding="utf-8")
        if page.name == "glossary.es.md":
            text = re.sub(r"\*librería\*", "", text)  # the glossary names the word it rejects
        text = re.sub(r"«[^»]*»", "", text)  # Nsight Compute's own English, quoted
        text = re.sub(r"```.*?```", "", text, flags=re.S)  # code is not prose
        for pattern, instead in REJECTED.items():
            for m in re.finditer(pattern, text, re.I):
                line = text.count("\n", 0, m.start()) + 1
                found.append(f"{page.relative_to(docs)}:{line}: {m[0]!r} (the glossary says: {instead})")
    assert not found, "\n".join(found)
    nav = _mkdocs_yml()
    assert "phase-24-cuda-triton/glossary.md" in nav and "Glossary: Glosario" in nav
