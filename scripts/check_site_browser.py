"""Open every page of the built course site, in both languages, in headless Chromium with the
network cut off, and check that it renders: Mermaid diagrams drawn, MathJax formulas typeset, images
loaded, the language switch present, no request to another host, no script error. Writes
screenshots of a diagram, a formula and a figure in each language and a report (report.md) into
the output folder.

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
SHOT_HEIGHT = 1400
# (screenshot name, page, what to capture): a diagram, a formula and a figure, in each language
SHOTS = [
    ("diagram", "phase-24-cuda-triton/lab/02-tuned-kernel/", "div.mermaid"),
    ("formula", "phase-24-cuda-triton/theory/02-from-naive-to-tiled/", "div.arithmatex"),
    ("figure", "phase-24-cuda-triton/theory/03-triton/", ".md-content figure"),
]

PROBE = """() => {
  const visible = e => e.getBoundingClientRect().height > 0;
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
    """Open a page and wait until its diagrams and formulas are drawn."""
    page.goto(url, wait_until="networkidle")
    if page.locator(".arithmatex").count():
        page.wait_for_function("() => window.MathJax && MathJax.startup && MathJax.startup.promise",
                               timeout=15000)
        page.evaluate("() => MathJax.startup.promise")
    if page.locator(".mermaid").count():
        page.wait_for_function("() => !document.querySelector('pre.mermaid')", timeout=15000)
    page.wait_for_timeout(300)


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
            context = browser.new_context(viewport={"width": WIDTH, "height": 900},
                                          service_workers="block")

            def route(r):
                host = urlsplit(r.request.url).hostname
                if host in ("127.0.0.1", None) or r.request.url.startswith(("data:", "blob:")):
                    return r.continue_()
                outside.append(r.request.url)
                return r.abort()

            context.route("**/*", route)
            for rel in pages(site):
                page = context.new_page()
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
                rows.append((rel, info, problems))
                if problems:
                    failures.append(rel)
                page.close()
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
            browser.close()
    finally:
        server.shutdown()
    write_report(out, rows, outside)
    print(f"{len(rows)} pages, {len(failures)} with problems, {len(outside)} requests to other hosts"
          f" (blocked); report and screenshots in {out}")
    for rel, _, problems in rows:
        for p in problems:
            print(f"  {rel}: {p}")
    return 0 if not failures and not outside else 1


def write_report(out: Path, rows: list, outside: list[str]) -> None:
    lines = ["# The course site in headless Chromium, offline",
             "",
             f"Written by `scripts/check_site_browser.py`: every page of a `mkdocs build --strict`, "
             f"served on 127.0.0.1 and opened in Chromium at {WIDTH} px with every other host "
             "unreachable. Requests to other hosts: " + (", ".join(outside) or "none") + ".",
             "",
             "| page | diagrams drawn | formulas typeset | images loaded | language switch | "
             "code blocks scrolling sideways | problems |",
             "|---|---|---|---|---|---|---|"]
    for rel, info, problems in rows:
        loaded = sum(1 for _, w in info["images"] if w)
        lines.append(f"| `{rel}` | {info['mermaidDrawn']} | {info['mathTypeset']}/{info['mathTotal']} "
                     f"| {loaded}/{len(info['images'])} | {' · '.join(info['langSwitch'])} "
                     f"| {info['codeScrolling']}/{info['codeBlocks']} "
                     f"| {'; '.join(problems) or 'none'} |")
    lines += ["", "Screenshots: " + ", ".join(f"`{n}-{lang}.png`" for n, _, _ in SHOTS
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
