"""Checks on the course site under docs/ (MkDocs Material + mkdocs-static-i18n, suffix structure).

(a) Every English page ``X.md`` has a Spanish twin ``X.es.md`` (and every Spanish page an English
    one) with the same heading structure (the same sequence of heading levels), the same fenced
    code blocks, and the same results placeholders. Code is compared exactly except for its
    comments: the comments of a page's own examples are in the page's language (issue 32), so they
    are removed before the comparison (``#`` comments in Python and shell, ``//`` and ``/* */`` in
    C-like code); the code itself, and every included file, is the same in both languages. Mermaid
    diagrams: their labels are prose and are translated, so only their structure (node ids, arrows,
    subgraphs, with every label removed) must match.
(b) ``mkdocs build --strict`` succeeds (into a temporary directory, run from the repository root,
    because pymdownx.snippets resolves its base_path against the working directory).
(c) Every pymdownx.snippets reference (``--8<-- "path"`` or ``--8<-- "path:section"``) points to an
    existing file and, for a named section, to a file holding both section markers, in that order.
    pymdownx.snippets only recognises a marker written with the scissors, in a comment of the
    source: ``// --8<-- [start:kernel]`` ... ``// --8<-- [end:kernel]``; a bare ``// [start:kernel]``
    is ignored (the build then fails with "Snippet section 'kernel' could not be located").
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
SNIPPET_BASE = ROOT  # mkdocs.yml: pymdownx.snippets base_path: ["."], built from the repository root

FENCE_OPEN = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
HEADING = re.compile(r"^(?P<hashes>#{1,6})[ \t]+\S")
PLACEHOLDER = re.compile(r"<!--\s*results:.*?-->", re.S)
SNIPPET_INLINE = re.compile(r"^[ \t]*(?P<escape>;?)-{1,}8<-{1,}[ \t]+(?P<q>[\"'])(?P<spec>.+?)(?P=q)[ \t]*$")
SNIPPET_BLOCK_EDGE = re.compile(r"^[ \t]*-{1,}8<-{1,}[ \t]*$")
SECTION_SPEC = re.compile(r"^(?P<path>.+?):(?P<section>[A-Za-z_][\w-]*)$")
LINES_SPEC = re.compile(r"^(?P<path>.+?)(?P<ranges>(?::\d*(?::\d*)?)(?:,\d*(?::\d*)?)*)$")


# ----------------------------------------------------------------------------------------------
# Markdown parsing: just enough to find headings and fences the way Python-Markdown sees them.


@dataclass
class Fence:
    info: str
    body: str
    line: int


@dataclass
class Page:
    headings: list[tuple[int, str]] = field(default_factory=list)  # (level, text)
    fences: list[Fence] = field(default_factory=list)
    placeholders: list[str] = field(default_factory=list)


def parse(text: str) -> Page:
    page = Page(placeholders=[" ".join(p.split()) for p in PLACEHOLDER.findall(text)])
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        m = FENCE_OPEN.match(line)
        if m:
            indent, fence, info = m["indent"], m["fence"], m["info"].strip()
            close = re.compile(r"^[ \t]*" + re.escape(fence[0]) + "{" + str(len(fence)) + r",}[ \t]*$")
            body: list[str] = []
            j = i + 1
            while j < len(lines) and not close.match(lines[j]):
                body_line = lines[j]
                body.append(body_line[len(indent):] if body_line.startswith(indent) else body_line.lstrip())
                j += 1
            page.fences.append(Fence(info=info, body="\n".join(body), line=i + 1))
            i = j + 1
            continue
        h = HEADING.match(line)
        if h:
            page.headings.append((len(h["hashes"]), line[len(h["hashes"]):].strip()))
        i += 1
    return page


HASH_COMMENTS = {"python", "py", "bash", "sh", "shell", "console", "text", "toml", "yaml"}
SLASH_COMMENTS = {"cuda", "c", "cpp", "c++", "cu"}


def without_comments(body: str, info: str) -> str:
    """A code block with its comments removed (outside string literals) and each line's trailing
    blanks dropped: what must be equal in both languages."""
    lang = (info.split() or [""])[0].lower()
    if lang not in HASH_COMMENTS | SLASH_COMMENTS:
        return body
    out, in_block = [], False
    for line in body.splitlines():
        kept, quote, i = [], None, 0
        while i < len(line):
            c = line[i]
            if in_block:
                if line.startswith("*/", i):
                    in_block, i = False, i + 2
                else:
                    i += 1
                continue
            if quote:
                kept.append(c)
                if c == "\\" and i + 1 < len(line):
                    kept.append(line[i + 1])
                    i += 2
                    continue
                if c == quote:
                    quote = None
            elif c in "\"'":
                quote = c
                kept.append(c)
            elif lang in HASH_COMMENTS and c == "#" and (i == 0 or line[i - 1] in " \t"):
                break
            elif lang in SLASH_COMMENTS and line.startswith("//", i):
                break
            elif lang in SLASH_COMMENTS and line.startswith("/*", i):
                in_block, i = True, i + 2
                continue
            else:
                kept.append(c)
            i += 1
        out.append("".join(kept).rstrip())
    return "\n".join(out)


def mermaid_structure(body: str) -> list[str]:
    """A mermaid diagram with every label removed: what must match across languages."""
    out = []
    for raw in body.splitlines():
        line = raw.split("%%", 1)[0]
        line = re.sub(r'"[^"]*"', '""', line)  # quoted labels, including edge labels
        for opening, closing in ("[]", "()", "{}", "||"):
            line = re.sub(re.escape(opening) + r"[^" + re.escape(closing) + r"]*" + re.escape(closing),
                          opening + closing, line)
        line = " ".join(line.split())
        if line:
            out.append(line)
    return out


def english_pages() -> list[Path]:
    return sorted(p for p in DOCS.rglob("*.md") if not p.name.endswith(".es.md"))


def spanish_pages() -> list[Path]:
    return sorted(DOCS.rglob("*.es.md"))


def twin(english: Path) -> Path:
    return english.with_name(english.name[: -len(".md")] + ".es.md")


def _id(p: Path) -> str:
    return str(p.relative_to(DOCS))


# ----------------------------------------------------------------------------------------------
# (a) bilingual twins


def test_docs_has_pages():
    assert (DOCS / "index.md").is_file(), "docs/index.md (the site home) is missing"
    assert english_pages(), "no pages under docs/"


@pytest.mark.parametrize("english", english_pages(), ids=_id)
def test_spanish_twin_exists(english: Path):
    assert twin(english).is_file(), f"{_id(english)} has no Spanish twin {_id(twin(english))}"


@pytest.mark.parametrize("spanish", spanish_pages(), ids=_id)
def test_english_twin_exists(spanish: Path):
    english = spanish.with_name(spanish.name[: -len(".es.md")] + ".md")
    assert english.is_file(), f"{_id(spanish)} has no English original {_id(english)}"


def _pair(english: Path) -> tuple[Page, Page]:
    es = twin(english)
    if not es.is_file():
        pytest.skip(f"no twin for {_id(english)} (reported by test_spanish_twin_exists)")
    return parse(english.read_text(encoding="utf-8")), parse(es.read_text(encoding="utf-8"))


@pytest.mark.parametrize("english", english_pages(), ids=_id)
def test_twins_have_same_heading_structure(english: Path):
    en, es = _pair(english)
    en_levels = [level for level, _ in en.headings]
    es_levels = [level for level, _ in es.headings]
    if en_levels != es_levels:
        rows = [f"  {'#' * a if a else '-':7} {ta[:45]:45} | {'#' * b if b else '-':7} {tb[:45]}"
                for (a, ta), (b, tb) in _zip_longest(en.headings, es.headings)]
        pytest.fail(f"{_id(english)} and its Spanish twin differ in heading structure:\n"
                    + "\n".join(rows))


def _zip_longest(a: list[tuple[int, str]], b: list[tuple[int, str]]):
    n = max(len(a), len(b))
    pad = (0, "")
    return [(a[i] if i < len(a) else pad, b[i] if i < len(b) else pad) for i in range(n)]


@pytest.mark.parametrize("english", english_pages(), ids=_id)
def test_twins_have_same_code_blocks(english: Path):
    en, es = _pair(english)
    assert len(en.fences) == len(es.fences), (
        f"{_id(english)} has {len(en.fences)} fenced blocks, its Spanish twin {len(es.fences)}")
    for k, (a, b) in enumerate(zip(en.fences, es.fences), start=1):
        where = f"{_id(english)}: fenced block {k} (English line {a.line}, Spanish line {b.line})"
        assert a.info == b.info, f"{where}: info string {a.info!r} vs {b.info!r}"
        if a.info.split()[:1] == ["mermaid"]:
            assert mermaid_structure(a.body) == mermaid_structure(b.body), (
                f"{where}: the diagrams differ in structure (labels aside)")
        else:
            assert without_comments(a.body, a.info) == without_comments(b.body, b.info), (
                f"{where}: the code differs between the languages (comments aside)")


@pytest.mark.parametrize("english", english_pages(), ids=_id)
def test_twins_have_same_results_placeholders(english: Path):
    en, es = _pair(english)
    assert en.placeholders == es.placeholders, (
        f"{_id(english)}: results placeholders differ: {en.placeholders} vs {es.placeholders}")


def test_parser_ignores_headings_inside_fences():
    page = parse("# A\n\n```python\n# not a heading\n```\n\n    ```bash\n    ## nor this\n    ```\n## B\n")
    assert [level for level, _ in page.headings] == [1, 2]
    assert [f.body for f in page.fences] == ["# not a heading", "## nor this"]


def test_code_comparison_ignores_comments_only():
    en = 'x = f("#a")  # one program per row\nfor i in range(3):  # each\n    pass\n'
    es = 'x = f("#a")  # un programa por fila\nfor i in range(3):  # cada uno\n    pass\n'
    other = 'x = f("#b")  # un programa por fila\nfor i in range(3):\n    pass\n'
    assert without_comments(en, "python") == without_comments(es, "python")
    assert without_comments(en, "python") != without_comments(other, "python")
    cu_en = 'int n = 1;  // rows\nchar* s = "//x"; /* a\nb */ int m;\n'
    cu_es = 'int n = 1;  // filas\nchar* s = "//x"; /* c\nd */ int m;\n'
    assert without_comments(cu_en, "cuda") == without_comments(cu_es, "cuda")
    assert without_comments("#include <x>\n", "cuda") == "#include <x>"
    assert without_comments("python -m phase24 doctor  # what works here", "bash") == "python -m phase24 doctor"


def test_mermaid_structure_ignores_labels_only():
    en = 'flowchart LR\n  A["Predict"] -- "yes" --> B{"Matches?"}\n'
    es = 'flowchart LR\n  A["Predice"] -- "sí" --> B{"¿Coincide?"}\n'
    other = 'flowchart LR\n  A["Predice"] --> C{"¿Coincide?"}\n'
    assert mermaid_structure(en) == mermaid_structure(es)
    assert mermaid_structure(en) != mermaid_structure(other)


# ----------------------------------------------------------------------------------------------
# (c) snippet references


@dataclass
class SnippetRef:
    page: Path
    line: int
    spec: str


def snippet_refs(page: Path, text: str) -> list[SnippetRef]:
    refs: list[SnippetRef] = []
    lines = text.splitlines()
    in_block = False
    for n, line in enumerate(lines, start=1):
        if SNIPPET_BLOCK_EDGE.match(line):
            in_block = not in_block
            continue
        if in_block:
            spec = line.strip()
            if spec and not spec.startswith(";"):
                refs.append(SnippetRef(page, n, spec))
            continue
        m = SNIPPET_INLINE.match(line)
        if m and not m["escape"]:
            refs.append(SnippetRef(page, n, m["spec"]))
    return refs


def snippet_problem(spec: str, base: Path) -> str | None:
    """What is wrong with one snippet reference, or None when it resolves."""
    if re.match(r"^[a-z]+://", spec):
        return f"{spec!r}: remote snippets are not allowed on this site"
    section = None
    m = SECTION_SPEC.match(spec)
    if m and not (base / spec).is_file():
        path, section = m["path"], m["section"]
    else:
        m = LINES_SPEC.match(spec)
        path = m["path"] if m and not (base / spec).is_file() else spec
    target = base / path
    if not target.is_file():
        return f"{spec!r}: no file {path!r} under {base}"
    if section is None:
        return None
    text = target.read_text(encoding="utf-8", errors="replace")

    def marker(kind: str, scissors: bool = True) -> re.Match | None:
        # The form pymdownx.snippets matches (case-insensitive), e.g. "// --8<-- [start:kernel]".
        cut = r"(?<!;)-{1,}8<-{1,}[ \t]+" if scissors else ""
        pattern = r"^.*?" + cut + r"\[[ \t]*" + kind + r"[ \t]*:[ \t]*" + re.escape(section) + r"[ \t]*\].*$"
        return re.search(pattern, text, re.M | re.I)

    start, end = marker("start"), marker("end")
    if not start or not end:
        missing = " and ".join(f"--8<-- [{w}:{section}]" for w, hit in (("start", start), ("end", end)) if not hit)
        bare = marker("start", scissors=False) or marker("end", scissors=False)
        hint = (f"; it has bare [start:{section}]/[end:{section}] markers, which pymdownx.snippets "
                f"ignores: write them as '// --8<-- [start:{section}]'") if bare else ""
        return f"{spec!r}: {path} has no {missing} marker{hint}"
    if end.start() < start.start():
        return f"{spec!r}: in {path}, [end:{section}] comes before [start:{section}]"
    return None


def all_snippet_refs() -> list[SnippetRef]:
    refs: list[SnippetRef] = []
    for page in sorted(DOCS.rglob("*.md")):
        refs.extend(snippet_refs(page, page.read_text(encoding="utf-8")))
    return refs


def test_snippet_references_resolve():
    problems = [f"{_id(r.page)}:{r.line}: {p}" for r in all_snippet_refs()
                if (p := snippet_problem(r.spec, SNIPPET_BASE))]
    assert not problems, "broken snippet references:\n" + "\n".join(problems)


def test_snippet_checker_catches_broken_references(tmp_path: Path):
    src = tmp_path / "src" / "k.cu"
    src.parent.mkdir()
    src.write_text("// --8<-- [start:kernel]\n__global__ void k() {}\n// --8<-- [end:kernel]\n"
                   "// --8<-- [end:late]\n// --8<-- [start:late]\n"
                   "// [start:bare]\nint bare;\n// [end:bare]\n")
    page = tmp_path / "p.md"
    page.write_text(
        "```cuda\n"
        '--8<-- "src/k.cu:kernel"\n'
        '--8<-- "src/k.cu"\n'
        '--8<-- "src/k.cu:1:2"\n'
        '--8<-- "src/k.cu:nope"\n'
        '--8<-- "src/k.cu:late"\n'
        '--8<-- "src/k.cu:bare"\n'
        '--8<-- "src/missing.cu:kernel"\n'
        ';--8<-- "src/escaped.cu"\n'
        "```\n"
        "--8<--\nsrc/k.cu\nsrc/also_missing.cu\n--8<--\n")
    refs = snippet_refs(page, page.read_text())
    verdict = {r.spec: snippet_problem(r.spec, tmp_path) for r in refs}
    assert set(verdict) == {"src/k.cu:kernel", "src/k.cu", "src/k.cu:1:2", "src/k.cu:nope",
                            "src/k.cu:late", "src/k.cu:bare", "src/missing.cu:kernel",
                            "src/also_missing.cu"}
    assert verdict["src/k.cu:kernel"] is None
    assert verdict["src/k.cu"] is None
    assert verdict["src/k.cu:1:2"] is None
    assert "[start:nope]" in verdict["src/k.cu:nope"]
    assert "bare" in verdict["src/k.cu:bare"] and "--8<-- [start:bare]" in verdict["src/k.cu:bare"]
    assert "comes before" in verdict["src/k.cu:late"]
    assert "no file" in verdict["src/missing.cu:kernel"]
    assert "no file" in verdict["src/also_missing.cu"]


# ----------------------------------------------------------------------------------------------
# A page as rendered: pymdownx.snippets' includes expanded the way mkdocs.yml configures it
# (base_path ".", check_paths, dedent_subsections), so that a word count sees what a reader sees.

SNIPPET_MARKER = re.compile(r"^.*?(?<!;)-{1,}8<-{1,}[ \t]+\[[ \t]*(?:start|end)[ \t]*:[ \t]*[A-Za-z][-\w]*[ \t]*\].*$",
                            re.I)
HTML_COMMENT = re.compile(r"<!--.*?-->", re.S)


def snippet_lines(spec: str, base: Path) -> tuple[Path, list[str]]:
    """The file a snippet reference names and the lines it includes: the whole file, its line
    ranges (``path:3:5,8:8``, 1-based, inclusive) or its section (``path:name``), each selection
    dedented (mkdocs.yml: dedent_subsections)."""
    problem = snippet_problem(spec, base)
    assert problem is None, problem
    ranges = section = None
    if (base / spec).is_file():
        path = spec
    elif (m := SECTION_SPEC.match(spec)) and (base / m["path"]).is_file():
        path, section = m["path"], m["section"]
    else:
        m = LINES_SPEC.match(spec)
        path, ranges = m["path"], m["ranges"][1:]
    text = (base / path).read_text(encoding="utf-8")
    lines = text.split("\n") if text else []
    if ranges is not None:
        picked: list[str] = []
        for part in ranges.split(","):
            a, _, b = part.partition(":")
            start = max(0, int(a) - 1) if a else None
            picked += lines[start:int(b) if b else None]
        lines = textwrap.dedent("\n".join(picked)).split("\n")
    elif section is not None:
        cut = r"(?<!;)-{1,}8<-{1,}[ \t]+\[[ \t]*(start|end)[ \t]*:[ \t]*" + re.escape(section) + r"[ \t]*\]"
        inside, picked = False, []
        for line in lines:
            m = re.search(cut, line, re.I)
            if m and m[1].lower() == "start":
                inside = True
            elif m:
                break
            elif inside:
                picked.append(line)
        lines = textwrap.dedent("\n".join(picked)).split("\n")
    return base / path, lines


def expand_snippets(text: str, base: Path = SNIPPET_BASE, seen: tuple[Path, ...] = ()) -> str:
    """The text with every snippet reference replaced by what it includes, recursively, each
    included line indented like the reference (inline ``--8<-- "spec"`` and block ``--8<--``
    forms; a ``;`` escapes a reference, a file that is already being included is skipped, and
    section markers are dropped)."""
    out: list[str] = []
    in_block = False
    for line in text.split("\n"):
        inline = SNIPPET_INLINE.match(line)
        if inline and inline["escape"]:
            out.append(line.replace(";", "", 1))
            continue
        if SNIPPET_BLOCK_EDGE.match(line):
            in_block = not in_block
            continue
        if not in_block and SNIPPET_MARKER.match(line):
            continue  # a section marker ("// --8<-- [start:kernel]") is not shown
        if in_block or inline:
            if in_block and inline:
                continue  # pymdownx.snippets ignores an inline reference inside a block
            spec = inline["spec"].strip() if inline else line.strip()
            if not spec:
                out.append("")
                continue
            if spec.startswith(";"):
                continue
            space = line[: len(line) - len(line.lstrip())].expandtabs(4)
            path, lines = snippet_lines(spec, base)
            if path in seen:
                continue
            body = expand_snippets("\n".join(lines), base, seen + (path,)) if lines else ""
            out += [space + x for x in body.split("\n")] if lines else []
            continue
        out.append(line)
    return "\n".join(out)


def rendered(page: Path) -> str:
    """A page's Markdown as the reader gets it: its includes expanded, its HTML comments dropped."""
    return HTML_COMMENT.sub(" ", expand_snippets(page.read_text(encoding="utf-8")))


# ----------------------------------------------------------------------------------------------
# (b) the strict build


def _missing_docs_stack() -> list[str]:
    wanted = {"mkdocs": "mkdocs", "material": "mkdocs-material", "mkdocs_static_i18n": "mkdocs-static-i18n",
              "pymdownx": "pymdown-extensions"}
    return [dist for mod, dist in wanted.items() if importlib.util.find_spec(mod) is None]


def test_mkdocs_build_strict(tmp_path: Path):
    missing = _missing_docs_stack()
    if missing:
        pytest.skip("the docs stack is not installed (missing: " + ", ".join(missing)
                    + "); install it with: pip install -e '.[docs]'")
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--clean", "-q",
         "-f", str(ROOT / "mkdocs.yml"), "-d", str(tmp_path / "site")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, (
        f"mkdocs build --strict failed (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    for page in ("index.html", "es/index.html", "phase-24-cuda-triton/index.html",
                 "es/phase-24-cuda-triton/index.html"):
        assert (tmp_path / "site" / page).is_file(), f"the build produced no {page}"


# ----------------------------------------------------------------------------------------------
# (d) The lab pages read as a path (issue 21, item 3): no run-by-run history in the prose, each page
#     short enough for one sitting, a prediction before every measured step and the measurement in a
#     collapsible reveal, and the Hopper-only designs on their own page.

LAB = DOCS / "phase-24-cuda-triton" / "lab"
# A reveal of a measurement is titled by what it holds: "Measured on the H200", "Medido en una H100"...
REVEAL_EN = re.compile(r'^\?\?\?\+? note "Measured on [^"]+"', re.M)
REVEAL_ES = re.compile(r'^\?\?\?\+? note "Medido en [^"]+"', re.M)
PATH_LABS = ["01-naive-kernel", "02-tuned-kernel", "03-triton-softmax", "04-minigpt-port",
             "going-further-hopper", "01-gemm-naive", "02-gemm-ladder", "03-gemm-triton",
             "going-further-hopper-gemm"]
# One sitting (issues 32 and 54): about 3,000 words of prose on an English lab page as the reader
# gets it, that is with its includes expanded (generated tables and their captions, included
# Markdown) and its collapsible reveals, but without code; a Spanish page may take 10% more words.
# The Hopper page, read after the path by those with Hopper time, keeps the earlier limit.
MAX_PROSE_WORDS = 3000
MAX_PROSE_WORDS_BY_PAGE = {"going-further-hopper": 3200}
SPANISH_ALLOWANCE = 1.10
# A commit-hash-like token: 7 to 40 hex digits with at least one digit and one letter a-f.
HEX_ID = re.compile(r"(?<![0-9A-Za-z])(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}(?![0-9A-Za-z])")
MARKDOWN_LINK_TARGET = re.compile(r"\]\([^)]*\)")
HTML_TAG = re.compile(r"</?[A-Za-z][^<>]*>")  # a tag opens with a name: `t < N` and `x > 0` are text


def lab_pages() -> list[Path]:
    return [LAB / f"{name}{suffix}" for name in PATH_LABS for suffix in (".md", ".es.md")]


def prose(text: str) -> str:
    """The page without its fenced code blocks, snippet lines (included files are generated or code)
    and link targets or HTML tags (an image path may name a run; the text around it may not)."""
    lines = text.splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        m = FENCE_OPEN.match(lines[i])
        if m:
            fence = m["fence"]
            close = re.compile(r"^[ \t]*" + re.escape(fence[0]) + "{" + str(len(fence)) + r",}[ \t]*$")
            i += 1
            while i < len(lines) and not close.match(lines[i]):
                i += 1
            i += 1
            continue
        if not (SNIPPET_INLINE.match(lines[i]) or SNIPPET_BLOCK_EDGE.match(lines[i])):
            out.append(lines[i])
        i += 1
    text = "\n".join(out)
    return HTML_TAG.sub(" ", MARKDOWN_LINK_TARGET.sub("]", text))


# A word: letters and digits, joined by an apostrophe, a point or a hyphen ("don't", "v1.2",
# "cuda-v10"), or by a comma between digits, so that a Spanish decimal ("6,0") counts once, as the
# English "6.0" does.
WORD = re.compile(r"[^\W_]+(?:['’.-][^\W_]+|(?<=\d),\d+)*")


def prose_words(text: str) -> int:
    return len(WORD.findall(prose(text)))


@pytest.mark.parametrize("page", lab_pages(), ids=_id)
def test_lab_prose_has_no_commit_hashes(page: Path):
    found = sorted(set(HEX_ID.findall(prose(page.read_text(encoding="utf-8")))))
    assert not found, (f"{page.relative_to(ROOT)}: commit-hash-like tokens in the prose {found}; the "
                       "run-by-run history belongs in results/ and explorations/README.md")


def test_prose_drops_tags_and_keeps_comparisons():
    """A `<` in text (`t < N`) opens no tag: the words up to the next real tag still count."""
    text = "Thread `t < CLUSTER` sends, and then\n<figure markdown>\n![plot](a.png)\n</figure>\nwaits.\n"
    words = prose(text).split()
    assert "sends," in words and "waits." in words and "figure" not in " ".join(words)


def prose_limit(page: Path) -> int:
    limit = MAX_PROSE_WORDS_BY_PAGE.get(page.name.split(".")[0], MAX_PROSE_WORDS)
    return round(limit * SPANISH_ALLOWANCE) if page.name.endswith(".es.md") else limit


@pytest.mark.parametrize("page", sorted(LAB.glob("*.md")), ids=_id)
def test_lab_pages_fit_one_sitting(page: Path):
    words = prose_words(rendered(page))
    limit = prose_limit(page)
    assert words <= limit, (f"{page.relative_to(ROOT)}: {words} words of prose as rendered, its includes "
                            f"expanded (limit {limit}); link long result sweeps instead of including them")


def test_prose_limit_gives_spanish_ten_percent_more():
    assert prose_limit(LAB / "02-tuned-kernel.md") == 3000
    assert prose_limit(LAB / "02-tuned-kernel.es.md") == 3300
    assert prose_limit(LAB / "going-further-hopper.es.md") == 3520


def test_include_expansion_counts_what_the_reader_sees(tmp_path: Path):
    """Included Markdown and its tables count, recursively, with the include's indentation; a line
    range or a section picks its lines; an include inside a code fence is code; comments, link
    targets and tags do not count."""
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "t.md").write_text(
        "| rung | % |\n|---|---|\n| `a` | 1,5 |\n| `b` | 2 |\n\nCaption of the table.\n")
    (tmp_path / "results" / "outer.md").write_text('Outer words.\n\n--8<-- "results/t.md:1:3"\n')
    (tmp_path / "k.cu").write_text("// --8<-- [start:kernel]\n    int three words;\n"
                                   "// --8<-- [end:kernel]\nint outside;\n")
    page = ("Two words.\n\n??? note \"Measured\"\n\n    --8<-- \"results/outer.md\"\n\n"
            "    --8<-- \"results/t.md:6:6\"\n\n```cuda\n--8<-- \"k.cu:kernel\"\n```\n\n"
            "<!-- results: hidden words here -->\n[link](../far/away/target.md) <b>bold</b>\n")
    text = expand_snippets(page, tmp_path)
    assert '    | `a` | 1,5 |' in text and "`b`" not in text.split("Caption")[0]  # lines 1 to 3 only
    assert "    Caption of the table." in text and "int three words;" in text
    assert "int outside" not in text and "[start:kernel]" not in text
    words = WORD.findall(prose(HTML_COMMENT.sub(" ", text)))
    assert words == ["Two", "words", "note", "Measured", "Outer", "words", "rung", "a", "1,5",
                     "Caption", "of", "the", "table", "link", "bold"]
    assert prose_words(page) == 10  # the page alone, includes skipped, its comment counted
    with pytest.raises(AssertionError, match="no file"):
        expand_snippets('--8<-- "results/missing.md"', tmp_path)


def test_prose_helpers_skip_code_snippets_and_link_targets():
    text = ("Run of 6e5b20e.\n\n```bash\ngit show 6e5b20e\n```\n\n--8<-- \"results/h200/x-6e5b20e.md\"\n\n"
            "![plot](../assets/softmax-e437d3f.png) <figure>2097152x128 1024 deadline</figure>\n")
    assert HEX_ID.findall(prose(text)) == ["6e5b20e"]
    assert HEX_ID.findall(prose("<code>softmax-e437d3f.png</code>")) == ["e437d3f"]
    assert prose_words("one two\n\n```\nthree four\n```\nfive") == 3


def test_ladder_labs_predict_then_reveal():
    """Labs 02 (both paths) and the Hopper page: every rung asks for the learner's prediction before
    its commands and keeps what was measured in a collapsible reveal after them."""
    for page in (LAB / "02-tuned-kernel.md", LAB / "going-further-hopper.md", LAB / "02-gemm-ladder.md"):
        text = page.read_text(encoding="utf-8")
        for section in re.split(r"^## ", text, flags=re.M)[1:]:
            if not re.match(r"(v\d+|triton-v\d)\b", section):
                continue
            name = section.split("\n", 1)[0]
            pred, found = section.find("Write down your prediction"), REVEAL_EN.search(section)
            reveal = found.start() if found else -1
            assert 0 <= pred < reveal, f"{page.name}, {name}: a prediction, then a reveal of the measurement"
            twin_text = twin(page).read_text(encoding="utf-8")
            assert len(REVEAL_ES.findall(twin_text)) == len(REVEAL_EN.findall(text))
            assert twin_text.count("Apunta tu predicción") == text.count("Write down your prediction")


def test_hopper_material_lives_on_its_own_page():
    hopper = (LAB / "going-further-hopper.md").read_text(encoding="utf-8")
    for anchor in ("v5", "v7", "v8", "v9", "v10", "lagged", "ring", "whole-row"):
        assert "{#" + anchor + "}" in hopper, anchor
    for name in ("02-tuned-kernel", "03-triton-softmax"):
        for suffix in (".md", ".es.md"):
            page = (LAB / f"{name}{suffix}").read_text(encoding="utf-8")
            assert not re.search(r"^#+ .*\((Hopper|Gluon)\)", page, flags=re.M), f"{name}{suffix}"
            assert "going-further-hopper.md" in page, f"{name}{suffix} links the Hopper page"
    assert "phase-24-cuda-triton/lab/going-further-hopper.md" in (ROOT / "mkdocs.yml").read_text(encoding="utf-8")


@pytest.mark.parametrize("page", lab_pages(), ids=_id)
def test_each_lab_asks_for_a_prediction_before_its_reveal(page: Path):
    text = page.read_text(encoding="utf-8")
    ask, title = (("Apunta tu predicción", REVEAL_ES) if page.name.endswith(".es.md")
                  else ("Write down your prediction", REVEAL_EN))
    found = title.search(text)
    assert 0 <= text.find(ask) < (found.start() if found else -1), f"{page.name}: a prediction, then a reveal"


def test_exercises_come_before_their_answers():
    """Lab 03 prints the naive Triton kernel (the starter's answer) only after the exercise; lab 02's
    first rung (lab 01's answer) says so before its code."""
    for suffix in (".md", ".es.md"):
        lab03 = (LAB / f"03-triton-softmax{suffix}").read_text(encoding="utf-8")
        assert lab03.index("{#exercise}") < lab03.index("triton/v0_naive.py:kernel")
        lab02 = (LAB / f"02-tuned-kernel{suffix}").read_text(encoding="utf-8")
        v1 = lab02.index("{#v1}")
        assert v1 < lab02.index("01-naive-kernel.md#exercise", v1) < lab02.index("cuda/v1_block_smem.cu:kernel")


# ----------------------------------------------------------------------------------------------
# (e) Issue 32: no answer before its question, every exercise answered, nothing of the team's
#     notebook on a learner's page.

THEORY = DOCS / "phase-24-cuda-triton" / "theory"
ANSWERS = DOCS / "phase-24-cuda-triton" / "solutions" / "exercises.md"
EXERCISE_LABS = ["00-hello-cuda", "01-naive-kernel", "02-tuned-kernel", "03-triton-softmax",
                 "04-minigpt-port", "going-further-hopper", "01-gemm-naive", "02-gemm-ladder",
                 "03-gemm-triton"]
REVEAL_TITLE = re.compile(r'\?\?\?\+? note "(?:What we measured|Lo que medimos|Measured on [^"]+|Medido en [^"]+)"')
FIGURE = re.compile(r"(?<![\w.,])(\d+(?:[.,]\d+)?)(?:\s?[–-]\s?(\d+(?:[.,]\d+)?))?[ \u00a0]?"
                    r"(%|us\b|µs|ms\b|GB/s|TB/s|[GT]FLOP/s)")
INCLUDE = re.compile(r'^[ \t]*-{1,}8<-{1,}[ \t]+"([^"]+)"', re.M)
RESULT_IMAGE = re.compile(r"assets/results/[\w./-]+\.png")


def reveals(text: str) -> list[str]:
    """The bodies of a page's reveals of measurements (indented below their title)."""
    out, lines = [], text.splitlines()
    for i, line in enumerate(lines):
        if REVEAL_TITLE.fullmatch(line.strip()):
            body = []
            for nxt in lines[i + 1:]:
                if nxt.strip() and not nxt.startswith((" ", "\t")):
                    break
                body.append(nxt)
            out.append("\n".join(body))
    return out


def _figures(text: str) -> set[str]:
    found = set()
    for m in FIGURE.finditer(prose(text)):
        unit = "us" if m[3] == "µs" else m[3]
        found |= {f"{n.replace(',', '.')} {unit}" for n in (m[1], m[2]) if n}
    return found


def revealed(text: str) -> dict[str, set[str]]:
    """What a page's reveals disclose: included result files (line ranges dropped), result
    images, and figures with a unit (%, us, ms, GB/s, TB/s, and GEMM's GFLOP/s, TFLOP/s) written
    in their prose."""
    out = {"includes": set(), "images": set(), "figures": set()}
    for body in reveals(text):
        out["includes"] |= {spec.split(".md:")[0].removesuffix(".md").removesuffix(".es")
                            for spec in INCLUDE.findall(body) if spec.startswith("results/")}
        out["images"] |= {img.removesuffix(".png").removesuffix(".es") for img in RESULT_IMAGE.findall(body)}
        out["figures"] |= _figures(body)
    return out


def disclosed(text: str) -> dict[str, set[str]]:
    """The same, for a whole page."""
    return {"includes": {spec.split(".md:")[0].removesuffix(".md").removesuffix(".es")
                         for spec in INCLUDE.findall(text) if spec.startswith("results/")},
            "images": {img.removesuffix(".png").removesuffix(".es") for img in RESULT_IMAGE.findall(text)},
            "figures": _figures(text)}


def answer_before_question(theory: str, labs: list[str]) -> list[str]:
    """What a theory page shows that a lab's reveal asks the learner to predict first."""
    asked = {"includes": set(), "images": set(), "figures": set()}
    for lab in labs:
        for k, v in revealed(lab).items():
            asked[k] |= v
    shown = disclosed(theory)
    return sorted(f"{k[:-1]} {x}" for k in asked for x in asked[k] & shown[k])


@pytest.mark.parametrize("page", sorted(THEORY.glob("*.md")), ids=_id)
def test_theory_shows_nothing_a_lab_asks_to_predict(page: Path):
    labs = [p.read_text(encoding="utf-8") for p in sorted(LAB.glob("*.md"))]
    found = answer_before_question(page.read_text(encoding="utf-8"), labs)
    assert not found, (f"{page.relative_to(ROOT)} shows what a lab's reveal asks the learner to predict "
                       f"first: {found}; the theory explains and predicts, the labs' reveals measure")


def test_the_answer_before_question_check_finds_each_kind():
    lab = ("Write down your prediction.\n\n??? note \"What we measured\"\n\n    It reached 81.1% on rows of"
           " 4096, 3,2\u00a0µs a call.\n\n    --8<-- \"results/h200/cuda_ladder.md:1:3\"\n\n"
           "    ![plot](../../assets/results/h200/softmax_lab02.png)\n\nAfter the reveal: 55.5%.\n")
    assert answer_before_question("The copy is 4273 GB/s; v1 reaches 81,1 %.", [lab]) == ["figure 81.1 %"]
    assert answer_before_question("A call takes 3.2 us.", [lab]) == ["figure 3.2 us"]
    gemm = ("Write down your prediction.\n\n??? note \"What we measured\"\n\n    v7 reaches 41.0 TFLOP/s"
            " at 4096³.\n")
    assert answer_before_question("The tiled kernel reaches 41.0 TFLOP/s.", [gemm]) == [
        "figure 41.0 TFLOP/s"]
    assert answer_before_question('--8<-- "results/h200/cuda_ladder.es.md"', [lab]) == [
        "include results/h200/cuda_ladder"]
    assert answer_before_question("![x](../../assets/results/h200/softmax_lab02.es.png)", [lab]) == [
        "image assets/results/h200/softmax_lab02"]
    assert answer_before_question("55.5% outside any reveal is not asked for.", [lab]) == []


ANSWER_LINK = re.compile(r"\]\(\.\./solutions/exercises\.md#(?P<id>[\w-]+)\)\{#(?P=id)\}")
BACK_LINK = re.compile(r"\]\(\.\./lab/(?P<page>[\w-]+)\.md#(?P<id>[\w-]+)\)\{#(?P=id)\}")
EXERCISE_START = re.compile(r"^(?:\*\*(?:Exercise|Ejercicio) \d+\b|\d+\. )")


def exercises(text: str) -> list[str]:
    """Each exercise of a lab page, as its text: a paragraph that opens with **Exercise N** (or
    **Ejercicio N**), or an item of a numbered list in a section whose heading names exercises,
    up to the next exercise, heading or paragraph at the margin."""
    found, current, in_section, fence = [], None, False, False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fence = not fence
        if fence:
            if current is not None:
                current.append(line)
            continue
        if line.startswith("#"):
            in_section = bool(re.search(r"exercise|ejercicio", line, re.I))
            current = None
            continue
        start = EXERCISE_START.match(line)
        if start and (line.startswith("**") or in_section):
            current = [line]
            found.append(current)
        elif current is not None and (line.startswith((" ", "\t")) or (line.strip() and not found[-1][-1].strip() == "")):
            current.append(line)
        elif current is not None and not line.strip():
            current.append(line)
        elif current is not None:
            current = None
    return ["\n".join(x) for x in found]


def exercise_problems(lab_name: str, lab_text: str, answers_text: str) -> list[str]:
    problems = []
    answers = {m["id"]: m["page"] for m in BACK_LINK.finditer(answers_text)}
    for ex in exercises(lab_text):
        ids = [m["id"] for m in ANSWER_LINK.finditer(ex)]
        first = ex.strip().splitlines()[0][:60]
        if len(ids) != 1:
            problems.append(f"{lab_name}: exercise {first!r} has {len(ids)} linked answers")
            continue
        if answers.get(ids[0]) != lab_name:
            problems.append(f"{lab_name}: exercise {first!r}: no answer #{ids[0]} that links back")
    for m in ANSWER_LINK.finditer(lab_text):  # every answer link, in an exercise or not
        if answers.get(m["id"]) != lab_name:
            problems.append(f"{lab_name}: the answer #{m['id']} is not on the answers page, or does not link back")
    return problems


@pytest.mark.parametrize("suffix", [".md", ".es.md"])
def test_every_exercise_links_its_answer_and_back(suffix: str):
    answers = ANSWERS.with_name("exercises" + suffix).read_text(encoding="utf-8")
    problems, count = [], 0
    for name in EXERCISE_LABS:
        text = (LAB / f"{name}{suffix}").read_text(encoding="utf-8")
        count += len(exercises(text))
        problems += exercise_problems(name, text, answers)
    linked = {m["id"] for name in EXERCISE_LABS
              for m in ANSWER_LINK.finditer((LAB / f"{name}{suffix}").read_text(encoding="utf-8"))}
    problems += [f"the answer #{m['id']} answers no exercise" for m in BACK_LINK.finditer(answers)
                 if m["id"] not in linked]
    assert count >= 25, f"only {count} exercises found: the exercise parser no longer sees them"
    assert not problems, "\n".join(problems)


def test_the_exercise_check_finds_an_unanswered_exercise():
    answers = "**Exercise 1.** [Back](../lab/x.md#x-1){#x-1}\n"
    lab = ("## Exercises\n\n1. **Do it.** Then this. [Answer](../solutions/exercises.md#x-1){#x-1}\n"
           "2. **Do more.** No link here.\n\n**Exercise 3 · Another.** [Answer](../solutions/exercises.md#x-3){#x-3}\n")
    problems = exercise_problems("x", lab, answers)
    assert len(exercises(lab)) == 3
    assert any("'2. **Do more.** No link here.' has 0 linked answers" in p for p in problems), problems
    assert any("#x-3" in p for p in problems), problems
    assert not exercise_problems("x", lab.split("2. ")[0], answers)


NOTEBOOK_PATH = re.compile(r"(?<![\w-])(?:results/h200/)?(?:history|explorations)/")
TEAM_VOICE = re.compile(r"\b(?:the team|in this run|the run before|el equipo|en esta ejecución|"
                        r"la ejecución anterior)\b", re.I)


def notebook_problems(text: str) -> list[str]:
    """A commit hash in the prose, a history/ or explorations/ path anywhere, or the team's voice."""
    return ([f"commit-like {h}" for h in sorted(set(HEX_ID.findall(prose(text))))]
            + [f"path {m[0]}" for m in NOTEBOOK_PATH.finditer(text)]
            + [f"team voice {m[0]!r}" for m in TEAM_VOICE.finditer(prose(text))])


@pytest.mark.parametrize("page", sorted(DOCS.rglob("*.md")), ids=_id)
def test_learner_pages_carry_no_notebook(page: Path):
    found = notebook_problems(page.read_text(encoding="utf-8"))
    assert not found, (f"{page.relative_to(ROOT)}: {found}; provenance lives in results/ (its README) "
                       "and in the page's one 'where these numbers come from' note")


def test_the_notebook_check_finds_each_kind():
    assert notebook_problems("Measured at commit a17ddaf.") == ["commit-like a17ddaf"]
    assert notebook_problems("see `results/h200/history/softmax-b1d2840.json`") == [
        "commit-like b1d2840", "path results/h200/history/"]
    assert notebook_problems("[x](../../explorations/2026-12-01-x/)") == ["path explorations/"]
    assert notebook_problems("The team measured it in this run.") == [
        "team voice 'The team'", "team voice 'in this run'"]
    assert notebook_problems("A row of 4096 values, 65536 x 4096, `c0ffee1` is no commit? It is.") == [
        "commit-like c0ffee1"]
    assert notebook_problems("results/h200/softmax.json and 2097152x128") == []


def table_head(lines: list[str], n: int) -> bool:
    """Whether line ``n`` (from 1) of a generated table file is a table's header or its separator
    line (a file may hold several tables, one question each, separated by a blank line)."""
    before = [lines[k - 1] if k >= 1 else "" for k in (n - 1, n - 2)]
    return lines[n - 1].startswith("|") and not all(b.startswith("|") for b in before)


def test_line_ranges_of_generated_tables_pick_a_rung_and_its_caption():
    """The labs' reveals include single rows of the generated ladder tables by line number
    (`results/h200/cuda_ladder.md:1:2,4:4`): each range must still pick the header, a row that
    names a rung, a row of the shape-by-shape table that names its dtype and shape
    (`results/h200/softmax_table.md:1:2,8:8`), or the caption after the table, so a table that gains
    a row cannot shift a reveal onto the wrong rung unseen."""
    wrong = []
    for page in sorted(LAB.glob("*.md")):
        for spec in INCLUDE.findall(page.read_text(encoding="utf-8")):
            m = re.match(r"^(results/h200/\w+?(?:\.es)?\.md):(.+)$", spec)
            if not m:
                continue
            lines = (ROOT / m[1]).read_text(encoding="utf-8").splitlines()
            for part in m[2].split(","):
                a, b = (int(x) for x in part.split(":"))
                for n in range(a, b + 1):
                    line = lines[n - 1]
                    ok = table_head(lines, n) or re.match(r"^\| `(cuda|triton)[\w-]*` \|", line) \
                        or re.match(r"^\| (float32|bfloat16|float16) \| \d+(x|\s×\s)\d+ \|", line) \
                        or (n == len(lines) and not line.startswith("|"))
                    if not ok:
                        wrong.append(f"{page.name}: {spec} line {n}: {line[:60]!r}")
    assert not wrong, "\n".join(wrong)
