"""MkDocs hook of the course site (mkdocs.yml: hooks). It makes the site work offline and fails a
strict build on what would render wrongly:

* on_config: MathJax and Mermaid must be in docs/assets/vendor/ (scripts/site_assets.sh installs
  them from their npm packages); without them the build stops, since formulas and diagrams would
  show as raw source.
* on_files: the benchmark's figures, results/h200/*.png, results/h200/gemm/*.png and the GEMM rungs'
  run's results/h200/gemm/rungs/*.png, join the site under assets/results/h200/ (gemm's under
  assets/results/h200/gemm/, the rungs' under assets/results/h200/gemm/rungs/),
  copied from the committed results at each build (never duplicated by hand under docs/).
* on_page_markdown: the list patterns that Python-Markdown renders wrongly (list_problems) are
  warnings, which --strict turns into a failed build.
* on_post_build: every built HTML page and stylesheet is scanned (offline_problems): a script,
  stylesheet, font, image or frame loaded from another host, or a local one missing from the
  site, is a warning too.

The checks are plain functions so that tests/test_site_checks.py can test them on small inputs.
"""

from __future__ import annotations

import logging
import re
from html.parser import HTMLParser
from pathlib import Path, PurePosixPath
from urllib.parse import unquote, urlsplit

from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File

log = logging.getLogger("mkdocs.hooks.site")  # under "mkdocs.", so --strict counts its warnings

ROOT = Path(__file__).resolve().parents[3]
VENDOR = ("assets/vendor/mathjax/tex-svg-full.js", "assets/vendor/mermaid/mermaid.min.js")
FIGURES = ROOT / "results" / "h200"
FIGURES_URI = "assets/results/h200"

# ----------------------------------------------------------------------------------------------
# Lists that Python-Markdown renders wrongly. It nests only at 4 spaces (tab_length), and a list
# cannot interrupt a paragraph. Three patterns follow from that:
#   "after-paragraph": a list item on the line right after a paragraph line: it joins the paragraph
#       (an ordered one only when its number is 1 or follows the last item's, so that a wrapped
#       line that happens to start with "262144." is not taken for a list);
#   "indent": a list item indented by other than a multiple of 4 spaces: a sub-bullet at 2 or 3
#       spaces becomes a sibling of its parent, not a child;
#   "short-continuation": inside a list, after a blank line, a line (text or a code fence) indented
#       1-3 spaces: it ends the list, so the items after it restart or fall into a paragraph.

LIST_ITEM = re.compile(r"^(?P<indent> *)(?:[-*+]|(?P<number>\d+)\.)[ \t]+\S")
FENCE = re.compile(r"^(?P<indent> *)(?P<fence>`{3,}|~{3,})")
NOT_PARAGRAPH = re.compile(
    r"^ *(?:#{1,6}[ \t]|[|<]|!!!|\?\?\?|===[ \t]|-{1,}8<-{1,}|\[\^[^\]]+\]:|\*\[|:[ \t]|\[[^\]]+\]:[ \t]|"
    r"\$\$|\\\[|-{3,}[ \t]*$|\*{3,}[ \t]*$|_{3,}[ \t]*$)")


def list_problems(markdown: str) -> list[tuple[int, str, str]]:
    """(line number, pattern, line) for each list pattern above, outside fenced code."""
    problems: list[tuple[int, str, str]] = []
    fence: re.Pattern | None = None
    block_first: str | None = None  # first line of the current run of non-blank lines
    prev_blank = True
    in_list = False
    last_number = None  # of the last ordered item seen
    for n, line in enumerate(markdown.splitlines(), start=1):
        if fence is not None:
            if fence.match(line):
                fence = None
            continue
        if not line.strip():
            prev_blank, block_first = True, None
            continue
        indent = len(line) - len(line.lstrip(" "))
        item = LIST_ITEM.match(line)
        f = FENCE.match(line)
        if prev_blank and in_list and 0 < indent < 4 and not item:
            problems.append((n, "short-continuation", line))
        if item:
            if indent % 4:
                problems.append((n, "indent", line))
            number = int(item["number"]) if item["number"] else None
            intended = number is None or number == 1 or (last_number is not None
                                                        and number == last_number + 1)
            if (intended and block_first is not None and not LIST_ITEM.match(block_first)
                    and not NOT_PARAGRAPH.match(block_first)):
                problems.append((n, "after-paragraph", line))
            in_list = True
            last_number = number if number is not None else last_number
        elif prev_blank and indent == 0:
            in_list = False  # a paragraph, heading or block at the margin ends any list
        elif not prev_blank and indent == 0 and re.match(r"#{1,6}[ \t]", line):
            in_list = False
        if f:
            mark = f["fence"]
            fence = re.compile(r"^ *" + re.escape(mark[0]) + "{" + str(len(mark)) + r",}[ \t]*$")
        if block_first is None:
            block_first = line
        prev_blank = False
    return problems


# ----------------------------------------------------------------------------------------------
# What a built page loads. "External" is any URL with a host (http:, https:, or scheme-relative
# //host), since nothing but the site itself is reachable where the site is read.

EXTERNAL = re.compile(r"^\s*(?:[a-z][a-z0-9+.-]*:)?//", re.I)
CSS_URL = re.compile(r"""url\(\s*['"]?(?P<url>[^'")\s]+)|@import\s+['"](?P<imp>[^'"]+)""", re.I)
LOADING_RELS = {"stylesheet", "preconnect", "dns-prefetch", "preload", "prefetch", "modulepreload",
                "icon", "shortcut", "apple-touch-icon", "manifest"}
SRC_TAGS = {"script", "img", "source", "video", "audio", "iframe", "embed", "track", "input"}


class _Loads(HTMLParser):
    """Collects (what, url) for every resource a page loads, and the CSS inside it."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.loads: list[tuple[str, str]] = []
        self.css: list[str] = []
        self._in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "link" and LOADING_RELS & set(a.get("rel", "").lower().split()):
            self.loads.append((f"<link rel={a.get('rel')}>", a.get("href", "")))
        if tag in SRC_TAGS and a.get("src"):
            self.loads.append((f"<{tag}>", a["src"]))
        if tag == "object" and a.get("data"):
            self.loads.append(("<object>", a["data"]))
        for attr in ("srcset", "imagesrcset"):
            for part in filter(None, (p.strip() for p in a.get(attr, "").split(","))):
                self.loads.append((f"<{tag} {attr}>", part.split()[0]))
        if a.get("style"):
            self.css.append(a["style"])
        self._in_style = tag == "style"

    def handle_endtag(self, tag: str) -> None:
        if tag == "style":
            self._in_style = False

    def handle_data(self, data: str) -> None:
        if self._in_style:
            self.css.append(data)


def css_urls(css: str) -> list[str]:
    return [m["url"] or m["imp"] for m in CSS_URL.finditer(css)]


def offline_problems(html: str, page: PurePosixPath, site: Path | None = None) -> list[str]:
    """What keeps one built page (its path in the site, e.g. es/index.html) from working offline:
    resources from other hosts and, when the site folder is given, local resources it lacks."""
    parser = _Loads()
    parser.feed(html)
    loads = parser.loads + [("CSS url()", u) for css in parser.css for u in css_urls(css)]
    out = []
    for what, url in loads:
        if EXTERNAL.match(url):
            out.append(f"{what} loads {url} from another host")
        elif site is not None and not url.startswith(("data:", "blob:", "#")):
            path = unquote(urlsplit(url).path)
            if not path:
                continue
            target = (site / page.parent / path) if not path.startswith("/") else site / path[1:]
            target = target / "index.html" if path.endswith("/") else target
            if not target.resolve().is_file():
                out.append(f"{what} loads {url}, which the site does not have")
    return out


def stylesheet_problems(css: str) -> list[str]:
    return [f"stylesheet loads {u} from another host" for u in css_urls(css) if EXTERNAL.match(u)]


# ----------------------------------------------------------------------------------------------
# The hook's events.


def on_config(config):
    docs = Path(config.docs_dir)
    missing = [v for v in VENDOR if not (docs / v).is_file()]
    if missing:
        raise PluginError(
            "the site's offline assets are missing (" + ", ".join(missing) + "): run "
            "`bash scripts/site_assets.sh` (scripts/setup.sh runs it), which unpacks MathJax and "
            "Mermaid from their npm packages into docs/assets/vendor/")
    return config


def on_files(files, config):
    pngs = [*FIGURES.glob("*.png"), *FIGURES.glob("gemm/*.png"), *FIGURES.glob("gemm/rungs/*.png")]
    for png in sorted(pngs):
        uri = f"{FIGURES_URI}/{png.relative_to(FIGURES).as_posix()}"
        if files.get_file_from_path(uri) is None:
            files.append(File.generated(config, uri, abs_src_path=str(png)))
    return files


def on_page_markdown(markdown, page, config, files):
    for n, pattern, line in list_problems(markdown):
        why = {"after-paragraph": "a list right after a paragraph line (add a blank line before it)",
               "indent": "a list item indented by other than a multiple of 4 spaces",
               "short-continuation": "a line inside a list indented less than 4 spaces, which "
                                     "ends the list"}[pattern]
        log.warning(f"{page.file.src_uri}:{n}: {why}: {line.strip()[:70]!r}")
    return markdown


@event_priority(-200)  # after static-i18n's post_build, which builds the other languages
def on_post_build(config):
    i18n = config.plugins.get("i18n")
    if i18n is not None and getattr(i18n, "building", False):
        return  # a language built from inside the main build: the main build scans the whole site
    site = Path(config.site_dir)
    for html in sorted(site.rglob("*.html")):
        rel = PurePosixPath(html.relative_to(site).as_posix())
        for problem in offline_problems(html.read_text(encoding="utf-8"), rel, site):
            log.warning(f"{rel}: {problem}")
    for css in sorted(site.rglob("*.css")):
        for problem in stylesheet_problems(css.read_text(encoding="utf-8", errors="replace")):
            log.warning(f"{css.relative_to(site)}: {problem}")
