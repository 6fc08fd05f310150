// MathJax configuration for pymdownx.arithmatex (generic mode): \( \) inline, \[ \] display.
// Loaded before MathJax itself (docs/assets/vendor/mathjax/tex-svg-full.js, installed from the
// mathjax npm package by scripts/site_assets.sh), on the pages that have formulas
// (docs/overrides/main.html). SVG output needs no font files, so nothing else is fetched.
window.MathJax = {
  tex: {
    inlineMath: [["\\(", "\\)"]],
    displayMath: [["\\[", "\\]"]],
    processEscapes: true,
    processEnvironments: true
  },
  options: {
    ignoreHtmlClass: ".*|",
    processHtmlClass: "arithmatex"
  },
  svg: {
    fontCache: "global"
  }
};

// Material for MkDocs swaps page content without a reload when navigation.instant is on; it is
// off on this site (static-i18n warns with it), but typesetting again on each page load keeps the
// math right if that ever changes. On the first load MathJax's own startup has typeset the page.
document$.subscribe(() => {
  if (!window.MathJax || !MathJax.startup || !MathJax.startup.promise) return;
  MathJax.startup.promise.then(() => {
    MathJax.typesetClear();
    MathJax.texReset();
    return MathJax.typesetPromise();
  });
});
