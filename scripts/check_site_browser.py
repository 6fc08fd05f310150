"""Open every page of the built course site, in both languages, in headless Chromium with the
network cut off, at a desktop's width (1400 px) and a phone's (400 px), its reveals closed and then
open, and check that it renders and can be read: Mermaid diagrams drawn, MathJax formulas typeset,
images loaded, the language switch present, no request to another host, no script error, no link
to an anchor that does not exist, and nothing a reader cannot see whole:

* no table, code block, formula, diagram or image wider than the box that shows it, except a table
  in a box that scrolls sideways with a visible cue (the site's shadowed edge) and hides at most
  MAX_HIDDEN of it (code wraps; formulas fit or break; figures are drawn for the column);
* a formula's glyphs at least MIN_TEXT_PX per em (MathJax's SVG has 1000 units per em, so its
  drawn size over its viewBox gives the size its letters are drawn at);
* a diagram's labels, and the text of paragraphs, lists, tables and code, at least MIN_TEXT_PX;
* an image at least MIN_IMAGE_SCALE of its own width (the plots' text is drawn for that).

Writes screenshots of a diagram, a formula and a figure in each language at 1400 px, of a formula
and a diagram in each language at 400 px, and a report (report.md) into the output folder.

Usage: python scripts/check_site_browser.py [--site DIR] [--out results/site]
  --site DIR  a site already built (default: build one with `mkdocs build --strict` into a
              temporary folder, from the repository root)
Needs Chromium (Debian: apt-get install chromium) and Playwright's Python client
(pip install -e '.[browser]'); Playwright drives the system's Chromium, it downloads no browser.
Exit status 0 when every page passes, 1 otherwise.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[1]
# Chromium as the probe of this machine kind starts it: no background traffic, and every host
# name but the loopback resolves to nothing, so the page cannot reach the internet even if asked.
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"]
WIDTH = 1400
WIDTHS = (1400, 400)     # a desktop's width and a phone's
MIN_TEXT_PX = 10.0       # letters of a formula or a diagram label, drawn
MIN_IMAGE_SCALE = 0.55   # an image drawn at least this share of its own width
MAX_HIDDEN = 0.15        # a designed sideways scroll (with its cue) hides at most this share
SCROLLABLE = ("table",)  # what may scroll sideways by design: code wraps, formulas break or fit
# (screenshot name, page, what to capture, width, height): a diagram, a formula and a figure at a
# desktop's width, a formula and a diagram at a phone's, in each language
THEORY_02 = "phase-24-cuda-triton/theory/02-from-naive-to-tiled/"
SHOTS = [
    ("diagram", "phase-24-cuda-triton/lab/02-tuned-kernel/", "div.mermaid", 1400, 1400),
    ("formula", THEORY_02, "div.arithmatex", 1400, 1400),
    ("figure", "phase-24-cuda-triton/lab/03-triton-softmax/", ".md-content figure", 1400, 1400),
    ("formula-400", THEORY_02, "div.arithmatex", 400, 800),
    ("diagram-400", THEORY_02, "div.mermaid", 400, 800),
]

# Material draws each Mermaid diagram in a closed shadow root; opened here, for the probe to
# measure the diagram's labels (the page itself does not change).
OPEN_SHADOW = """(() => {
  const attach = Element.prototype.attachShadow;
  Element.prototype.attachShadow = function (init) { return attach.call(this, {...init, mode: 'open'}); };
})();"""

# The measurements of a page, taken in it (formulas, diagrams, images, boxes and what they
# show, the smallest text, ids and links): scripts/check_site_browser.js.
PROBE = "\n".join(line for line in Path(__file__).with_name("check_site_browser.js").read_text()
                  .splitlines() if not line.startswith("//")).strip()[1:-1]  # the function itself


def build_site(into: Path) -> None:
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(into)],
                   cwd=ROOT, env=env, check=True)


def serve(site: Path) -> tuple[http.server.ThreadingHTTPServer, str]:
    handler = functools.partial(_QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


def pages(site: Path, only: str | None = None) -> list[str]:
    """The site's pages (relative URLs); with ``only``, those whose URL contains it."""
    found = sorted(p.relative_to(site).parent.as_posix() + "/" if p.name == "index.html"
                   else p.relative_to(site).as_posix()
                   for p in site.rglob("*.html") if p.name != "404.html")
    return [rel for rel in found if only is None or only in rel]


def known_404(url: str) -> bool:
    """Material's language selector looks for a sitemap.xml beside each alternate link, which it
    expects to be a language's home; static-i18n makes them links to the same page in each
    language, so that request misses (locally: nothing leaves the site) and Material falls back
    to the links as they are."""
    return url.endswith("/sitemap.xml") and urlsplit(url).path != "/sitemap.xml"


def settle(page, url: str) -> None:
    """Open a page and wait until its diagrams and formulas are drawn, its reveals closed."""
    page.goto(url, wait_until="networkidle")
    if page.locator(".arithmatex").count():
        page.wait_for_function("() => window.MathJax && MathJax.startup && MathJax.startup.promise",
                               timeout=15000)
        page.evaluate("() => MathJax.startup.promise")
    if page.locator(".mermaid").count():
        page.wait_for_function("() => !document.querySelector('pre.mermaid')", timeout=15000)


def open_reveals(page) -> None:
    """Open every reveal, as a reader does (they hold formulas, tables and figures too)."""
    page.evaluate("() => document.querySelectorAll('details').forEach(d => { d.open = true; })")
    page.wait_for_timeout(300)


def size_problems(info: dict) -> list[str]:
    """Formulas, diagrams and images drawn smaller than readable."""
    out = []
    for f in info["formulas"]:
        if f["px"] < MIN_TEXT_PX:
            out.append(f"formula {f['what']!r} drawn at {f['px']} px per em ({f['w']} x {f['h']} px)")
    for d in info["diagrams"]:
        if d["px"] < MIN_TEXT_PX:
            out.append(f"diagram {d['what']!r}: labels drawn at {d['px']} px ({d['w']} x {d['h']} px)")
    for i in info["imgs"]:
        if i["natural"] and i["scale"] < MIN_IMAGE_SCALE:
            out.append(f"image {i['what']} drawn at {i['scale']} of its width ({i['w']} of {i['natural']} px)")
    if info["pageScrolls"]:
        out.append("the page scrolls sideways")
    text = info.get("smallestText")
    if text and text["px"] < MIN_TEXT_PX:
        out.append(f"text {text['what']!r} at {text['px']} px")
    return out


def overflow_problems(info: dict) -> list[str]:
    """Tables, code blocks, formulas, diagrams and images wider than the box that shows them: each
    fails, unless it is a table in a box that scrolls sideways with a visible cue and hides at most
    MAX_HIDDEN of it."""
    out = []
    for b in info["boxes"]:
        if b["w"] <= b["box"] + 1:
            continue
        hidden = (b["w"] - b["box"]) / b["w"]
        designed = b["kind"] in SCROLLABLE and b["scrolls"] and b["cue"]
        if designed and hidden <= MAX_HIDDEN:
            continue
        how = ("scrolls with a cue" if designed else "scrolls with no cue" if b["scrolls"]
               else "is cut")
        out.append(f"{b['kind']} {b['what']!r} is {b['w']:g} px wide in a {b['box']:g} px box "
                   f"({hidden:.0%} hidden; it {how})")
    return out


def broken_anchors(seen: dict[str, dict], base: str) -> list[str]:
    """Links between the site's pages whose #anchor names no element of the page they lead to.
    ``seen``: {url of a page: its probe} for every page opened."""
    ids = {url.split("#")[0]: set(info["ids"]) for url, info in seen.items()}
    out = []
    for url, info in seen.items():
        for link in info["links"]:
            target, _, anchor = link.partition("#")
            if not anchor or not link.startswith(base):
                continue
            if target not in ids:
                if target.endswith((".html", "/")):
                    out.append(f"{url[len(base):]}: a link to {link[len(base):]}, a page the site lacks")
                continue
            if anchor not in ids[target]:
                out.append(f"{url[len(base):]}: a link to #{anchor} of {target[len(base):] or '/'}, "
                           "which has no such id")
    return sorted(set(out))


def shoot(page, url: str, selector: str, height: int, path: Path) -> None:
    """A screenshot of the page as a reader sees it, reveals open, the element just below the
    sticky header."""
    settle(page, url)
    open_reveals(page)
    page.set_viewport_size({"width": page.viewport_size["width"], "height": height})
    page.locator(selector).first.evaluate(
        "e => window.scrollTo(0, e.getBoundingClientRect().top + scrollY - 100)")
    page.wait_for_timeout(200)
    page.screenshot(path=str(path))
    page.close()


def check(site: Path, out: Path, only: str | None = None) -> int:
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        print("no chromium on PATH (Debian: apt-get install chromium)")
        return 1
    out.mkdir(parents=True, exist_ok=True)
    server, base = serve(site)
    rows, failures, outside, opened = [], [], [], {}
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium, headless=True, args=ARGS)
            contexts = {w: browser.new_context(viewport={"width": w, "height": 900},
                                               service_workers="block") for w in WIDTHS}

            def route(r):
                host = urlsplit(r.request.url).hostname
                if host in ("127.0.0.1", None) or r.request.url.startswith(("data:", "blob:")):
                    return r.continue_()
                outside.append(r.request.url)
                return r.abort()

            for context in contexts.values():
                context.route("**/*", route)
                context.add_init_script(OPEN_SHADOW)
            for rel, width in [(rel, w) for rel in pages(site, only) for w in WIDTHS]:
                page = contexts[width].new_page()
                errors: list[str] = []
                page.on("pageerror", lambda e, errors=errors: errors.append(str(e)))
                page.on("console", lambda m, errors=errors: errors.append(m.text)
                        if m.type == "error" and "Failed to load resource" not in m.text else None)
                page.on("response", lambda r, errors=errors: errors.append(
                    f"{r.url} answered {r.status}") if r.status >= 400 and not known_404(r.url)
                    else None)
                settle(page, base + rel)
                closed = page.evaluate(PROBE)
                open_reveals(page)
                info = page.evaluate(PROBE)
                if width == WIDTH:
                    opened[page.url.split("#")[0]] = info  # as the browser spells it
                problems = list(errors)
                problems += [f"reveals closed: {p}" for p in overflow_problems(closed)
                             if p not in overflow_problems(info)]
                problems += overflow_problems(info)
                if info["mermaidRaw"]:
                    problems.append(f"{info['mermaidRaw']} Mermaid block(s) left as source")
                if info["mathTypeset"] != info["mathTotal"]:
                    problems.append(f"{info['mathTotal'] - info['mathTypeset']} of "
                                    f"{info['mathTotal']} formulas not typeset")
                if len(info["langSwitch"]) != 2:
                    problems.append(f"language switch shows {info['langSwitch']}")
                problems += [f"image {src} did not load" for src, w in info["images"] if not w]
                problems += size_problems(info)
                rows.append((rel, width, info, problems))
                if problems:
                    failures.append(f"{rel} at {width} px")
                page.close()
            anchors = broken_anchors(opened, base)
            if only is None:
                for name, rel, selector, width, height in SHOTS:
                    for lang, prefix in (("en", ""), ("es", "es/")):
                        shoot(contexts[width].new_page(), base + prefix + rel, selector, height,
                              out / f"{name}-{lang}.png")
            browser.close()
    finally:
        server.shutdown()
    if only:
        anchors = [a for a in anchors if "a page the site lacks" not in a]  # pages not opened
    write_report(out, rows, outside, anchors)
    print(f"{len(rows)} pages x widths, {len(failures)} with problems, {len(outside)} requests to "
          f"other hosts (blocked), {len(anchors)} broken anchors; report and screenshots in {out}")
    for rel, width, _, problems in rows:
        for p in problems:
            print(f"  {rel} at {width} px: {p}")
    for url in outside:
        print(f"  request to another host: {url}")
    for a in anchors:
        print(f"  broken anchor: {a}")
    return 0 if not failures and not outside and not anchors else 1


def write_report(out: Path, rows: list, outside: list[str], anchors: list[str]) -> None:
    lines = ["# The course site in headless Chromium, offline",
             "",
             f"Written by `scripts/check_site_browser.py`: every page of a `mkdocs build --strict`, "
             f"served on 127.0.0.1 and opened in Chromium at {' and '.join(map(str, WIDTHS))} px "
             "with every other host unreachable, its reveals closed and then opened. Requests to "
             "other hosts: "
             + (", ".join(outside) or "none") + ".",
             "",
             "Whole means: no table, code block, formula, diagram or image wider than its box, "
             f"but a table that scrolls with a cue and hides at most {MAX_HIDDEN:.0%} of itself. "
             f"Readable means: a formula's letters at {MIN_TEXT_PX:g} px per em or more, a "
             f"diagram's labels at {MIN_TEXT_PX:g} px or more, an image at {MIN_IMAGE_SCALE:g} of "
             "its own width or more. The smallest of each on the page is given (px, or the "
             "image's scale).",
             "",
             "| page | width | diagrams drawn (smallest label) | formulas typeset (smallest) | "
             "images loaded (smallest scale) | language switch | code blocks scrolling sideways | "
             "problems |",
             "|---|---|---|---|---|---|---|---|"]

    def least(items, key):
        return f" ({min(i[key] for i in items):g})" if items else ""

    for rel, width, info, problems in rows:
        loaded = sum(1 for _, w in info["images"] if w)
        lines.append(f"| `{rel}` | {width} | {info['mermaidDrawn']}{least(info['diagrams'], 'px')} "
                     f"| {info['mathTypeset']}/{info['mathTotal']}{least(info['formulas'], 'px')} "
                     f"| {loaded}/{len(info['images'])}{least(info['imgs'], 'scale')} "
                     f"| {' · '.join(info['langSwitch'])} "
                     f"| {info['codeScrolling']}/{info['codeBlocks']} "
                     f"| {'; '.join(problems) or 'none'} |")
    lines += ["", "Broken anchors: " + ("; ".join(anchors) or "none") + "."]
    lines += ["", "Screenshots: " + ", ".join(f"`{n}-{lang}.png`" for n, *_ in SHOTS
                                               for lang in ("en", "es")) + "."]
    (out / "report.md").write_text("\n".join(lines) + "\n")


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--site", type=Path)
    ap.add_argument("--out", type=Path, default=ROOT / "results" / "site")
    ap.add_argument("--pages", metavar="TEXT", help="only the pages whose URL contains TEXT")
    args = ap.parse_args(argv)
    if args.site:
        return check(args.site, args.out, args.pages)
    with tempfile.TemporaryDirectory() as tmp:
        build_site(Path(tmp) / "site")
        return check(Path(tmp) / "site", args.out, args.pages)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
