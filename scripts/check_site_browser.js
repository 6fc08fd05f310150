// What scripts/check_site_browser.py measures on each page, as a reader's browser draws it: one
// function, evaluated in the page, that returns the measurements as JSON.
(() => {
  const visible = e => e.getBoundingClientRect().height > 0;
  // what a reader can see: inside an open reveal, in the selected tab
  const shown = e => e.checkVisibility ? e.checkVisibility() : visible(e);
  const round = x => Math.round(x * 10) / 10;
  const label = e => (e.closest('[id]') ? '#' + e.closest('[id]').id + ' ' : '')
                     + (e.textContent || '').trim().replace(/\s+/g, ' ').slice(0, 40);
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
  // what is wider than the box that shows it; a box that scrolls sideways with a cue (the site's
  // fading edge, a background gradient) is a designed scroll, judged by the share it hides
  const holderOf = (e, h) => ({w: round(e), box: round(h.clientWidth),
    scrolls: /auto|scroll/.test(getComputedStyle(h).overflowX),
    cue: /gradient/.test(getComputedStyle(h).backgroundImage)});
  const column = document.querySelector('.md-content__inner') || document.body;
  const boxes = [
    ...[...document.querySelectorAll('.md-typeset table')].filter(shown).map(t => ({kind: 'table',
      what: label(t), ...holderOf(t.getBoundingClientRect().width,
                                  t.closest('.md-typeset__scrollwrap') || t.parentElement)})),
    ...[...document.querySelectorAll('pre > code')].filter(shown).map(c => ({kind: 'code block',
      what: label(c), ...holderOf(c.scrollWidth, c)})),
    ...[...document.querySelectorAll('div.arithmatex')].filter(shown).map(d => {
      const svg = d.querySelector('svg');
      return {kind: 'formula', what: label(d),
              ...holderOf(svg ? svg.getBoundingClientRect().width : 0, d)}; }),
    ...[...document.querySelectorAll('span.arithmatex svg')].filter(shown).map(s => ({
      kind: 'formula', what: label(s.closest('.arithmatex')),
      ...holderOf(s.getBoundingClientRect().width, column)})),
    ...[...document.querySelectorAll('div.mermaid')].filter(shown).map(d => {
      const svg = (d.shadowRoot || d).querySelector('svg');
      return {kind: 'diagram', what: label(d),
              ...holderOf(svg ? svg.getBoundingClientRect().width : 0, d)}; }),
    ...[...document.querySelectorAll('.md-content img')].filter(shown).map(i => ({kind: 'image',
      what: i.getAttribute('src'), ...holderOf(i.getBoundingClientRect().width,
                                               i.closest('figure') || i.parentElement)})),
  ];
  const texts = [...column.querySelectorAll('p, li, td, th, pre > code, figcaption, summary')]
    .filter(e => shown(e) && e.textContent.trim())
    .map(e => ({what: label(e), px: parseFloat(getComputedStyle(e).fontSize)}));
  const smallestText = texts.reduce((a, b) => (a && a.px <= b.px ? a : b), null);
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
    formulas, diagrams, imgs, boxes, smallestText,
    ids: [...document.querySelectorAll('[id]')].map(e => e.id),
    links: [...document.querySelectorAll('.md-content a[href]')].map(a => a.href),
    pageScrolls: document.documentElement.scrollWidth > window.innerWidth + 1,
    title: document.title,
    visible: visible(document.body),
  };
})
