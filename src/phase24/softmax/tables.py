"""Softmax's benchmark results as the pages and the README show them: the main table (time,
GB/s and % of copy per implementation, and cuda's speed-up over torch) and the few-row table (a
caller's time per call beside a copy of the same bytes), in English or Spanish."""

from __future__ import annotations

from phase24.core.spanish import NBSP, es_number
from phase24.softmax.shapes import is_bulk

# The table's words and number style, per language (Spanish: core.spanish's numbers, µs, and a
# no-break space before units and %).
TABLE_WORDS = {
    "en": dict(dtype="dtype", shape="M x N", vs="cuda vs torch", refused="refused", x="x",
               times="x", num=lambda v, d: f"{v:.{d}f}", cell="{us} us, {gbps} GB/s ({pct}%)"),
    "es": dict(dtype="tipo de dato", shape="M × N", vs="cuda frente a torch", refused="rechazada",
               x=f"{NBSP}×{NBSP}", times="×", num=es_number,
               cell=f"{{us}}{NBSP}µs, {{gbps}}{NBSP}GB/s ({{pct}}{NBSP}%)"),
}


def markdown_table(result: dict, impls=("torch", "cuda", "triton"), lang: str = "en") -> str:
    """The README's results table (lang "es": the Spanish pages'), made from a benchmark JSON:
    time, GB/s and % of copy per implementation. Shapes keep their digits ungrouped, as they are
    typed on the command line."""
    w = TABLE_WORDS[lang]
    recs = {(r["impl"], r["dtype"], r["M"], r["N"]): r for r in result["records"]}
    head = f"| {w['dtype']} | {w['shape']} | " + " | ".join(impls) + f" | {w['vs']} |"
    lines = [head, "|" + "---|" * (len(impls) + 3)]
    for dt in dict.fromkeys(r["dtype"] for r in result["records"]):
        for m, n in dict.fromkeys((r["M"], r["N"]) for r in result["records"] if r["dtype"] == dt):
            cells = []
            for i in impls:
                r = recs.get((i, dt, m, n))
                cells.append(w["refused"] if r is None else w["cell"].format(
                    us=w["num"](r["us"], 1), gbps=f"{r['gbps']:.0f}", pct=f"{r['pct_copy']:.0f}"))
            cuda = recs.get(("cuda", dt, m, n))
            lines.append(f"| {dt} | {m}{w['x']}{n} | " + " | ".join(cells) +
                         f" | {w['num'](cuda['speedup_vs_torch'], 2)}{w['times']} |")
    return "\n".join(lines)


def host_rows(result: dict, impls=("torch", "cuda", "triton"), field: str = "loop_us"
              ) -> tuple[list[str], list[list]]:
    """The few-row shapes as a caller sees them: (columns, rows of [dtype, M, N, then per column
    the microseconds per call of ``field``, or None]). ``loop_us``: a caller's back-to-back
    calls; ``host_us``: one flushed call with the host's launch included (runs before loop_us
    was recorded have only that). The columns: a copy of the same bytes (the ceiling under the
    same timing), then ``impls`` and the peers that ran."""
    if not any(field in r for r in result["records"]):
        field = "host_us"
    heads = ["copy"] + list(impls) + [p for p in result.get("peers", []) if p not in impls]
    recs = {(r["impl"], r["dtype"], r["M"], r["N"]): r.get(field) for r in result["records"]}
    copies = {(c["dtype"], c["M"], c["N"]): c.get(field)
              for c in result.get("copy_same_size", [])}
    rows = []
    for dt in dict.fromkeys(r["dtype"] for r in result["records"]):
        for m, n in dict.fromkeys((r["M"], r["N"]) for r in result["records"]
                                  if r["dtype"] == dt and not is_bulk(r["M"], r["N"])):
            rows.append([dt, m, n, copies.get((dt, m, n))] +
                        [recs.get((i, dt, m, n)) for i in heads[1:]])
    return heads, rows


def host_table(result: dict, lang: str = "en") -> str:
    """The README's few-row table (lang "es": the Spanish pages'): a caller's microseconds per
    call (loop_us where recorded), and cuda's share of the same-size copy's speed."""
    w = TABLE_WORDS[lang]
    heads, rows = host_rows(result)
    share = "cuda / copy" if lang == "en" else "cuda / copia"
    lines = [f"| {w['dtype']} | {w['shape']} | " + " | ".join(heads) + f" | {share} |",
             "|" + "---|" * (len(heads) + 3)]
    unit = " us" if lang == "en" else f"{NBSP}µs"
    for dt, m, n, *us in rows:
        cells = [w["refused"] if u is None else w["num"](u, 1) + unit for u in us]
        copy, cuda = us[0], us[heads.index("cuda")]
        pct = "-" if None in (copy, cuda) else w["num"](100 * copy / cuda, 0) + \
            ("%" if lang == "en" else f"{NBSP}%")
        lines.append(f"| {dt} | {m}{w['x']}{n} | " + " | ".join(cells) + f" | {pct} |")
    return "\n".join(lines)

