"""Open every page of the built course site, in both languages, in headless Chromium with the
network cut off, at a desktop's width (1400 px) and a phone's (400 px), and check that it renders
and can be read: Mermaid diagrams drawn, MathJax formulas typeset, images loaded, the language
switch present, no request to another host, no script error, and no formula, diagram or image
shown smaller than readable (each measured as drawn, collapsed reveals opened first):

* a formula's glyphs at least MIN_TEXT_PX per em (MathJax's SVG has 1000 units per em, so its
  drawn size over its viewBox gives the size its letters are drawn at);
* a diagram's labels at least MIN_TEXT_PX (their font size times the diagram's drawn scale);
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
SHOT_HEIGHT = 1400
PHONE_SHOT_HEIGHT = 800
MIN_TEXT_PX = 10.0       # letters of a formula or a diagram label, drawn
MIN_IMAGE_SCALE = 0.55   # an image drawn at least this share of its own width
# (screenshot name, page, what to capture): a diagram, a formula and a figure, in each language
SHOTS = [
    ("diagram", "phase-24-cuda-triton/lab/02-tuned-kernel/", "div.mermaid"),
    ("formula", "phase-24-cuda-triton/theory/02-from-naive-to-tiled/", "div.arithmatex"),
    ("figure", "phase-24-cuda-triton/lab/03-triton-softmax/", ".md-content figure"),
]
# at a phone's width: a formula and a diagram, in each language
PHONE_SHOTS = [
    ("formula-400", "phase-24-cuda-triton/theory/02-from-naive-to-tiled/", "div.arithmatex"),
    ("diagram-400", "phase-24-cuda-triton/theory/02-from-naive-to-tiled/", "div.mermaid"),
]

# Material draws each Mermaid diagram in a closed shadow root; opened here, for the probe to
# measure the diagram's labels (the page itself does not change).
OPEN_SHADOW = """(() => {
  const attach = Element.prototype.attachShadow;
  Element.prototype.attachShadow = function (init) { return attach.call(this, {...init, mode: 'open'}); };
})();"""

PROBE = """() => {
  const visible = e => e.getBoundingClientRect().height > 0;
  // what a reader can see: inside an open reveal, in the selected tab
  const shown = e => e.checkVisibility ? e.checkVisibility() : visible(e);
  const round = x => Math.round(x * 10) / 10;
  const label = e => (e.closest('[id]') ? '#' + e.closest('[id]').id + ' ' : '')
                     + (e.textContent || '').trim().replace(/\\s+/g, ' ').slice(0, 40);
  // formulas: px per em as drawn (MathJax's SVG: 1000 viewBox units per em)
  const formulas = [...document.querySelectorAll('.arithmatex mjx-container svg')].filter(shown).map(svg => {
    const r = svg.getBoundingClientRect(), vb = svg.viewBox.baseVal;
    return {what: label(svg.closest('.arithmatex')), w: round(r.width), h: round(r.height),
            px: vb && vb.width ? round(r.width / vb.width * 1000) : 0};
  });
  // diagrams: a label's font size times the drawn scale of the SVG (Material draws Mermaid in a shadow root)
  const diagrams = [...document.querySelectorAll('div.mermaid')].filter(shown).map(div => {
    const root = div.shadowRoot || div, svg = root.querySelector('svg');
    if (!svg) return {what: label(div), w: 0, h: 0, px: 0};
    const r = svg.getBoundingClientRect(), vb = svg.viewBox.baseVal;
    const text = root.querySelector('.nodeLabel, .label, text, span');
    const font = text ? parseFloat(getComputedStyle(text).fontSize) : 16;
    return {what: label(div), w: round(r.width), h: round(r.height),
            px: vb && vb.width ? round(font * r.width / vb.width) : 0};
  });
  const imgs = [...document.querySelectorAll('.md-content img')].filter(shown).map(i => {
    const r = i.getBoundingClientRect();
    return {what: i.getAttribute('src'), w: round(r.width), natural: i.naturalWidth,
            scale: i.naturalWidth ? round(r.width / i.naturalWidth * 100) / 100 : 0};
  });
  const math = [...document.querySelectorAll('.arithmatex')];
  const pres = [...document.querySelectorAll('pre > code')];
  return {
    mermaidRaw: document.querySelectorAll('pre.mermaid').length,
    mermaidDrawn: [...document.querySelectorAll('div.mermaid')].filter(e => e.getBoundingClientRect().height > 40).length,
    mathTotal: math.length,
    mathTypeset: math.filter(e => e.querySelector('mjx-container svg') && !e.querySelector('mjx-merror')).length,
    langSwitch: [...document.querySelectorAll('.lang-switch a, .lang-switch strong')].map(e => e.textContent.trim()),
    images: [...document.querySelectorAll('.md-content img')].map(i => [i.getAttribute('src'), i.naturalWidth]),
    codeBlocks: pres.length,
    codeScrolling: pres.filter(c => c.scrollWidth > c.clientWidth + 1).length,
    formulas, diagrams, imgs,
    pageScrolls: document.documentElement.scrollWidth > window.innerWidth + 1,
    title: document.title,
    visible: visible(document.body),
  };
}"""


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


def pages(site: Path) -> list[str]:
    return sorted(p.relative_to(site).parent.as_posix() + "/" if p.name == "index.html"
                  else p.relative_to(site).as_posix()
                  for p in site.rglob("*.html") if p.name != "404.html")


def known_404(url: str) -> bool:
    """Material's language selector looks for a sitemap.xml beside each alternate link, which it
    expects to be a language's home; static-i18n makes them links to the same page in each
    language, so that request misses (locally: nothing leaves the site) and Material falls back
    to the links as they are."""
    return url.endswith("/sitemap.xml") and urlsplit(url).path != "/sitemap.xml"


def settle(page, url: str) -> None:
    """Open a page, wait until its diagrams and formulas are drawn, then open its reveals (a
    collapsed reveal holds formulas and figures too: they are measured as a reader opens them)."""
    page.goto(url, wait_until="networkidle")
    if page.locator(".arithmatex").count():
        page.wait_for_function("() => window.MathJax && MathJax.startup && MathJax.startup.promise",
                               timeout=15000)
        page.evaluate("() => MathJax.startup.promise")
    if page.locator(".mermaid").count():
        page.wait_for_function("() => !document.querySelector('pre.mermaid')", timeout=15000)
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
    return out


def check(site: Path, out: Path) -> int:
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        print("no chromium on PATH (Debian: apt-get install chromium)")
        return 1
    out.mkdir(parents=True, exist_ok=True)
    server, base = serve(site)
    rows, failures, outside = [], [], []
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
            for rel, width in [(rel, w) for rel in pages(site) for w in WIDTHS]:
                page = contexts[width].new_page()
                errors: list[str] = []
                page.on("pageerror", lambda e, errors=errors: errors.append(str(e)))
                page.on("console", lambda m, errors=errors: errors.append(m.text)
                        if m.type == "error" and "Failed to load resource" not in m.text else None)
                page.on("response", lambda r, errors=errors: errors.append(
                    f"{r.url} answered {r.status}") if r.status >= 400 and not known_404(r.url)
                    else None)
                settle(page, base + rel)
                info = page.evaluate(PROBE)
                problems = list(errors)
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
            context = contexts[WIDTH]
            for name, rel, selector in SHOTS:
                for lang, prefix in (("en", ""), ("es", "es/")):
                    page = context.new_page()
                    settle(page, base + prefix + rel)
                    # the page as a reader sees it, the element just below the sticky header
                    page.set_viewport_size({"width": WIDTH, "height": SHOT_HEIGHT})
                    page.locator(selector).first.evaluate(
                        "e => window.scrollTo(0, e.getBoundingClientRect().top + scrollY - 120)")
                    page.wait_for_timeout(200)
                    page.screenshot(path=str(out / f"{name}-{lang}.png"))
                    page.close()
            for name, rel, selector in PHONE_SHOTS:
                for lang, prefix in (("en", ""), ("es", "es/")):
                    page = contexts[400].new_page()
                    settle(page, base + prefix + rel)
                    page.set_viewport_size({"width": 400, "height": PHONE_SHOT_HEIGHT})
                    page.locator(selector).first.evaluate(
                        "e => window.scrollTo(0, e.getBoundingClientRect().top + scrollY - 80)")
                    page.wait_for_timeout(200)
                    page.screenshot(path=str(out / f"{name}-{lang}.png"))
                    page.close()
            browser.close()
    finally:
        server.shutdown()
    write_report(out, rows, outside)
    print(f"{len(rows)} pages x widths, {len(failures)} with problems, {len(outside)} requests to "
          f"other hosts (blocked); report and screenshots in {out}")
    for rel, width, _, problems in rows:
        for p in problems:
            print(f"  {rel} at {width} px: {p}")
    for url in outside:
        print(f"  request to another host: {url}")
    return 0 if not failures and not outside else 1


def write_report(out: Path, rows: list, outside: list[str]) -> None:
    lines = ["# The course site in headless Chromium, offline",
             "",
             f"Written by `scripts/check_site_browser.py`: every page of a `mkdocs build --strict`, "
             f"served on 127.0.0.1 and opened in Chromium at {' and '.join(map(str, WIDTHS))} px "
             "with every other host unreachable, its reveals opened. Requests to other hosts: "
             + (", ".join(outside) or "none") + ".",
             "",
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
    lines += ["", "Screenshots: " + ", ".join(f"`{n}-{lang}.png`" for n, _, _ in SHOTS + PHONE_SHOTS
                                               for lang in ("en", "es")) + "."]
    (out / "report.md").write_text("\n".join(lines) + "\n")


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--site", type=Path)
    ap.add_argument("--out", type=Path, default=ROOT / "results" / "site")
    args = ap.parse_args(argv)
    if args.site:
        return check(args.site, args.out)
    with tempfile.TemporaryDirectory() as tmp:
        build_site(Path(tmp) / "site")
        return check(Path(tmp) / "site", args.out)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
