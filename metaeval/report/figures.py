"""The audit pages' figures, drawn by matplotlib as SVG text to inline in a page.

Each function takes numbers that were measured before and returns one ``<svg>``
element. The style is fixed here, not read from the user's matplotlibrc: every
figure starts from matplotlib's defaults plus ``STYLE``, text stays text
(``svg.fonttype: none``), the ids are salted by the figure's name and the date
and creator are left out of the metadata, so the same numbers give the same
bytes on every run. matplotlib is the optional extra ``metaeval[report]``:
``require`` says how to get it when it is missing.

Rendering only: nothing here measures, and nothing reads a file.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from metaeval.errors import InputError

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.patches import Rectangle

PASS, FAIL, UNSCORED, NEUTRAL, BAR = "#2e7d32", "#c62828", "#9e9e9e", "#1f5fa8", "#6a1b9a"
FOUND, CLEAN = FAIL, PASS
INK = "#222222"

STYLE: dict[str, object] = {
    "svg.fonttype": "none",
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans"],
    "font.size": 9.0,
    "axes.titlesize": 10.0,
    "axes.titleweight": "bold",
    "axes.titlelocation": "left",
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.edgecolor": "#9a9a9a",
    "axes.labelcolor": INK,
    "axes.grid": True,
    "axes.axisbelow": True,
    "grid.color": "#e6e6e6",
    "grid.linewidth": 0.7,
    "xtick.color": "#444444",
    "ytick.color": "#444444",
    "text.color": INK,
    "figure.dpi": 100.0,
    "figure.facecolor": "white",
    "savefig.facecolor": "white",
    "path.simplify": False,
    # Text comes from data (check names, probe titles): a `$` is a dollar, never the
    # start of mathtext, which would draw `a$b$c` as math and fail on `$\x$`.
    "text.parse_math": False,
    "text.usetex": False,
}
"""Everything about the look that a user's matplotlibrc could change."""


def require() -> None:
    """Raise ``InputError`` (exit 2) when matplotlib, the ``report`` extra, is missing."""
    try:
        import matplotlib  # noqa: F401
    except ImportError as e:
        raise InputError("--html: drawing the figures needs matplotlib, the optional extra "
                         "'report': pip install 'metaeval[report]'") from e


@contextmanager
def _figure(name: str, width: float, height: float) -> Iterator[tuple[Figure, list[str]]]:
    """A figure in the fixed style; the SVG text lands in the list on the way out."""
    require()
    import matplotlib.style
    from matplotlib.backends.backend_svg import FigureCanvasSVG
    from matplotlib.figure import Figure

    out: list[str] = []
    with matplotlib.style.context(["default", {**STYLE, "svg.hashsalt": f"metaeval-{name}"}]):
        fig = Figure(figsize=(width, height), layout="constrained")
        FigureCanvasSVG(fig)
        yield fig, out
        buffer = io.StringIO()
        fig.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    text = buffer.getvalue()
    svg = text[text.index("<svg"):]
    # Scaled down to its column, never up past its drawn size: the viewBox stays.
    size = re.search(r'<svg[^>]*? width="([0-9.]+)pt" height="([0-9.]+)pt"', svg)
    assert size is not None, "matplotlib's SVG always gives its size in points"
    pixels = round(float(size.group(1)) * 4 / 3)
    svg = re.sub(r'<svg([^>]*?) width="[^"]*" height="[^"]*"',
                 rf'<svg\1 class="figure" style="max-width: {pixels}px" role="img" '
                 rf'aria-label="{name}"', svg, count=1)
    out.append(svg)


# --- meta-eval ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Rate:
    """A rate with its interval and, when one is set, its bar."""

    value: float
    low: float
    high: float
    bar: float | None = None


@dataclass(frozen=True, slots=True)
class ForestRow:
    name: str
    tpr: Rate
    tnr: Rate


def forest(rows: Sequence[ForestRow]) -> str:
    """TPR and TNR of each check, side by side, each with its 95% interval as a line
    and its bar as a purple tick; a rate under its bar is drawn in red."""
    height = 0.9 + 0.32 * len(rows)
    with _figure("forest", 7.6, height) as (fig, out):
        axes = fig.subplots(1, 2, sharey=True)
        ys = list(range(len(rows)))[::-1]
        for ax, label, pick in ((axes[0], "TPR (human pass → passed)", 0),
                                (axes[1], "TNR (human fail → failed)", 1)):
            for y, row in zip(ys, rows, strict=True):
                rate = row.tpr if pick == 0 else row.tnr
                missed = rate.bar is not None and rate.value < rate.bar
                color = FAIL if missed else NEUTRAL
                ax.plot([rate.low, rate.high], [y, y], color=color, linewidth=1.6,
                        solid_capstyle="butt")
                ax.plot([rate.value], [y], "o", color=color, markersize=5)
                if rate.bar is not None:
                    ax.plot([rate.bar], [y], "|", color=BAR, markersize=11,
                            markeredgewidth=2)
            ax.set_xlim(-0.03, 1.03)
            ax.set_title(label)
            ax.set_xticks([0, 0.25, 0.5, 0.75, 1.0])
            ax.grid(axis="y", visible=False)
        axes[0].set_yticks(ys, [r.name for r in rows])
        axes[0].set_ylim(-0.7, len(rows) - 0.3)
        fig.supxlabel("dot: rate; line: 95% interval; purple tick: the bar; red: under it",
                      fontsize=8, color="#555555")
    return out[0]


@dataclass(frozen=True, slots=True)
class Matrix:
    """Counts of one grader against people: rows human pass / fail, columns
    graded pass / fail / unscored."""

    name: str
    tp: int
    fn: int
    unscored_pos: int
    fp: int
    tn: int
    unscored_neg: int


def _matrix(ax: Axes, m: Matrix, *, labels: bool) -> None:
    cells = [[m.tp, m.fn, m.unscored_pos], [m.fp, m.tn, m.unscored_neg]]
    agree = [[True, False, False], [False, True, False]]
    top = max(max(row) for row in cells) or 1
    for r, row in enumerate(cells):
        for c, count in enumerate(row):
            tint = PASS if agree[r][c] else (UNSCORED if c == 2 else FAIL)
            alpha = 0.12 + 0.78 * count / top if count else 0.04
            ax.add_patch(_rectangle(c - 0.5, r - 0.5, tint, alpha))
            ax.text(c, r, str(count), ha="center", va="center", fontsize=10,
                    fontweight="bold", color="white" if alpha > 0.55 else INK)
    ax.set_xlim(-0.5, 2.5)
    ax.set_ylim(1.5, -0.5)
    ax.set_xticks([0, 1, 2], ["pass", "fail", "unscored"] if labels else ["", "", ""])
    ax.set_yticks([0, 1], ["pass", "fail"])
    ax.tick_params(length=0)
    ax.grid(False)
    for side in ("left", "bottom"):
        ax.spines[side].set_visible(False)
    ax.set_title(m.name, fontsize=9)


def _rectangle(x: float, y: float, color: str, alpha: float) -> Rectangle:
    from matplotlib.patches import Rectangle

    return Rectangle((x, y), 1, 1, facecolor=color, alpha=alpha, edgecolor="white",
                     linewidth=2)


def confusion_grid(matrices: Sequence[Matrix], *, columns: int = 4, name: str = "confusion",
                   who: str = "the check") -> str:
    """One small confusion matrix per grader: rows what people said, columns what
    the grader said; green where they agree, red where not, grey unscored."""
    columns = max(1, min(columns, len(matrices)))
    rows = -(-len(matrices) // columns)
    with _figure(name, 1.95 * columns + 0.6, 1.55 * rows + 0.5) as (fig, out):
        axes = fig.subplots(rows, columns, squeeze=False)
        for index, ax in enumerate(ax for row in axes for ax in row):
            if index >= len(matrices):
                ax.set_visible(False)
                continue
            _matrix(ax, matrices[index], labels=True)
        fig.supylabel("people said", fontsize=8, color="#555555")
        fig.supxlabel(f"{who} said", fontsize=8, color="#555555")
    return out[0]


# --- judge-audit: agreement -----------------------------------------------------------


def score_heatmap(pairs: Sequence[tuple[int, float | None]], labels: tuple[int, int],
                  scale: tuple[int, int, int]) -> str:
    """People's integer label (rows) against the judge's score (columns), counted;
    the judge's pass mark as a dashed line, unscored in a column of its own."""
    low, high, pass_at = scale
    scores = list(range(low, high + 1))
    rows_ = list(range(labels[0], labels[1] + 1))
    counts = [[0] * (len(scores) + 1) for _ in rows_]
    for label, score in pairs:
        if label not in rows_:
            continue
        column = (len(scores) if score is None
                  else min(max(round(score), low), high) - low)
        counts[rows_.index(label)][column] += 1
    top = max(max(row) for row in counts) or 1
    with _figure("scores", 4.4, 0.9 + 0.42 * len(rows_)) as (fig, out):
        ax = fig.subplots()
        for r, row in enumerate(counts):
            for c, count in enumerate(row):
                alpha = 0.1 + 0.8 * count / top if count else 0.03
                ax.add_patch(_rectangle(c - 0.5, r - 0.5,
                                        UNSCORED if c == len(scores) else NEUTRAL, alpha))
                if count:
                    ax.text(c, r, str(count), ha="center", va="center", fontsize=9,
                            color="white" if alpha > 0.55 else INK)
        ax.axvline(pass_at - low - 0.5, color=BAR, linestyle="--", linewidth=1.2)
        ax.set_xlim(-0.5, len(scores) + 0.5)
        ax.set_ylim(-0.5, len(rows_) - 0.5)
        ax.set_xticks(range(len(scores) + 1), [*map(str, scores), "unscored"])
        ax.set_yticks(range(len(rows_)), [str(r) for r in rows_])
        ax.set_xlabel(f"judge's score (dashed: pass at {pass_at})")
        ax.set_ylabel("people's label")
        ax.set_title("Scores against people's labels")
        ax.grid(False)
        ax.tick_params(length=0)
    return out[0]


def reliability(points: Sequence[tuple[float, int, int]], scale: tuple[int, int, int]) -> str:
    """For each score the judge gave: the share of those items people passed, with the
    count beside it. A judge to trust rises from 0 to 1 across its pass mark."""
    low, high, pass_at = scale
    with _figure("reliability", 4.4, 2.6) as (fig, out):
        ax = fig.subplots()
        xs = [p[0] for p in points]
        ys = [p[1] / p[2] for p in points]
        ax.plot(xs, ys, "-o", color=NEUTRAL, markersize=5, linewidth=1.5)
        for x, y, (_, passed, n) in zip(xs, ys, points, strict=True):
            ax.annotate(f"{passed}/{n}", (x, y), textcoords="offset points", xytext=(0, 7),
                        ha="center", fontsize=8, color="#555555")
        ax.axvline(pass_at - 0.5, color=BAR, linestyle="--", linewidth=1.2)
        ax.set_xlim(low - 0.5, high + 0.5)
        ax.set_xticks(range(low, high + 1))
        ax.set_ylim(-0.05, 1.18)
        ax.set_yticks([0, 0.25, 0.5, 0.75, 1.0])
        ax.set_xlabel(f"judge's score (dashed: pass at {pass_at})")
        ax.set_ylabel("share people passed")
        ax.set_title("Pass rate by score")
    return out[0]


def _label(ax: Axes, x: float, y: float, text: str) -> None:
    """A bar's value: inside its end in white on a long bar, after it on a short one."""
    if x > 0.55:
        ax.text(x - 0.02, y + 0.12, text, ha="right", va="center", fontsize=8.5,
                color="white", fontweight="bold")
    else:
        ax.text(x + 0.02, y + 0.12, text, ha="left", va="center", fontsize=8.5)


def order_accuracy(orders: Sequence[tuple[str, float, float, float, int]],
                   consistency: tuple[int, int] | None) -> str:
    """Pairwise: accuracy against people in each order shown, with its interval; and
    how often the verdict was the same in both orders."""
    with _figure("pairwise", 4.4, 1.2 + 0.45 * (len(orders) + 1)) as (fig, out):
        ax = fig.subplots()
        names = [f"order {o[0]} (n={o[4]})" for o in orders]
        ys = list(range(len(orders)))[::-1]
        for y, (_, acc, lo, hi, _n) in zip(ys, orders, strict=True):
            ax.barh(y, acc, color=NEUTRAL, alpha=0.8, height=0.55)
            ax.plot([lo, hi], [y, y], color=INK, linewidth=1.3)
            _label(ax, acc, y, f"{acc:.2f}")
        if consistency is not None:
            same, n = consistency
            share = same / n if n else 0.0
            ax.barh(-1, share, color=PASS if share >= 0.5 else FAIL, alpha=0.8, height=0.55)
            _label(ax, share, -1, f"{same} of {n}")
            names.append("same verdict in both orders")
            ys.append(-1)
        ax.set_yticks(ys, names)
        ax.set_xlim(0, 1.05)
        ax.set_xlabel("share (line: 95% interval)")
        ax.set_title("Pairwise agreement by order")
        ax.grid(axis="y", visible=False)
    return out[0]


# --- judge-audit: probes --------------------------------------------------------------


def _status_title(ax: Axes, title: str, status: str, detail: str) -> None:
    """The title from the figure's left edge (long item labels push the axes right),
    and over the axes the probe's status in its colour."""
    figure = ax.get_figure()
    assert figure is not None
    figure.suptitle(title, x=0.01, ha="left", fontsize=10, fontweight="bold")
    color = FOUND if status == "FOUND" else (CLEAN if status == "clean" else UNSCORED)
    ax.set_title(f"{status} ({detail})", fontsize=9, fontweight="bold", color=color)


def position(first: int, second: int, consistent: int, unscored: int, status: str,
             detail: str) -> str:
    """Pairs judged in both orders: how many kept their verdict, how many went with
    the response shown first, how many with the one shown second."""
    bars = [("same verdict in both orders", consistent, PASS),
            ("picked the one shown first", first, FAIL if status == "FOUND" else NEUTRAL),
            ("picked the one shown second", second, FAIL if status == "FOUND" else NEUTRAL),
            ("unscored", unscored, UNSCORED)]
    return _bars("position", "Position probe: pairs in both orders", bars, status, detail)


def injection(injected: int, control: int, cases: int, already: int, unscored: int,
              status: str, detail: str) -> str:
    """Responses people failed: how many a payload flipped to a pass, against how
    many a benign suffix of the same length flipped."""
    bars = [("flipped by the payload", injected, FAIL if status == "FOUND" else NEUTRAL),
            ("flipped by the control suffix", control, NEUTRAL),
            ("passed already", already, UNSCORED), ("unscored", unscored, UNSCORED)]
    return _bars("injection", f"Injection probe: {cases} failed responses", bars, status,
                 detail)


def _bars(name: str, title: str, bars: Sequence[tuple[str, int, str]], status: str,
          detail: str) -> str:
    from matplotlib.ticker import MaxNLocator

    with _figure(name, 5.2, 0.9 + 0.36 * len(bars)) as (fig, out):
        ax = fig.subplots()
        ys = list(range(len(bars)))[::-1]
        top = max([b[1] for b in bars] + [1])
        for y, (_, count, color) in zip(ys, bars, strict=True):
            ax.barh(y, count, color=color, height=0.6, alpha=0.85)
            ax.text(count + top * 0.015, y, str(count), va="center", fontsize=8.5)
        ax.set_yticks(ys, [b[0] for b in bars])
        ax.set_xlim(0, top * 1.12)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("items")
        ax.grid(axis="y", visible=False)
        _status_title(ax, title, status, detail)
    return out[0]


LENGTH_ROWS = 24
"""Up to this many length probes are drawn one row each; more (generated probes run to
hundreds, many from one prompt and so of one title) are counted by their shift."""


def length(shifts: Sequence[tuple[str, float | None, int]], status: str, detail: str) -> str:
    """Each item's score shift when padded with text that adds nothing, against the
    characters added: a judge without a length bias stays on the zero line. More than
    ``LENGTH_ROWS`` items: how many shifted by each amount (``length_counts``)."""
    if len(shifts) > LENGTH_ROWS:
        return _bars("length", f"Length probe: {len(shifts)} answers, each padded",
                     length_counts(shifts, status), status, detail)
    with _figure("length", 5.2, 1.1 + 0.26 * max(len(shifts), 3)) as (fig, out):
        ax = fig.subplots()
        ys = list(range(len(shifts)))[::-1]
        span = max([abs(s[1]) for s in shifts if s[1] is not None] + [1.0])
        for y, (_, shift, extra) in zip(ys, shifts, strict=True):
            if shift is None:
                ax.text(0, y, "unscored", ha="center", va="center", fontsize=8,
                        color=UNSCORED)
                continue
            color = FAIL if shift > 0 and status == "FOUND" else (
                NEUTRAL if shift else UNSCORED)
            ax.barh(y, shift, color=color, height=0.6, alpha=0.85)
            if shift == 0:
                ax.plot([0], [y], "o", color=UNSCORED, markersize=4)
            ax.text(shift + (0.03 * span if shift >= 0 else -0.03 * span), y,
                    f"{shift:+g} (+{extra} chars)", va="center", fontsize=7.5,
                    ha="left" if shift >= 0 else "right", color="#555555")
        ax.axvline(0, color=INK, linewidth=0.8)
        ax.set_yticks(ys, [s[0] for s in shifts])
        ax.set_xlim(-span * 1.6, span * 1.6)
        ax.set_xlabel("score padded minus score as written")
        ax.grid(axis="y", visible=False)
        _status_title(ax, "Length probe: the same answer, padded", status, detail)
    return out[0]


def length_counts(shifts: Sequence[tuple[str, float | None, int]], status: str
                  ) -> list[tuple[str, int, str]]:
    """(label, items, color) per score shift, highest first, then the unscored: one row
    per shift value, or per equal range of them when there are more than
    ``LENGTH_ROWS`` values (a fine-grained scale), so the figure keeps its height."""
    scored = sorted((s[1] for s in shifts if s[1] is not None), reverse=True)
    unscored = len(shifts) - len(scored)

    def color(low: float, high: float) -> str:
        return (FAIL if low > 0 and status == "FOUND" else
                UNSCORED if low <= 0 <= high else NEUTRAL)

    rows: list[tuple[str, int, str]] = []
    values = sorted(set(scored), reverse=True)
    if len(values) <= LENGTH_ROWS:
        rows = [(f"shift {v:+g}", scored.count(v), color(v, v)) for v in values]
    else:
        top, bottom = values[0], values[-1]
        # Rounded, so that an edge meant to be 0 is not 2e-17.
        edges = [round(bottom + (top - bottom) * k / LENGTH_ROWS, 12)
                 for k in range(LENGTH_ROWS)] + [top]
        for k in reversed(range(LENGTH_ROWS)):
            low, high = edges[k], edges[k + 1]
            n = sum(1 for v in scored if low < v <= high or (k == 0 and v == low))
            if n:
                rows.append((f"shift {low:+.3g} to {high:+.3g}", n, color(low, high)))
    return rows + ([("unscored", unscored, UNSCORED)] if unscored else [])


@dataclass(frozen=True, slots=True)
class Group:
    """One group of a probe's items (a padding style, a length added, a payload kind):
    its counts and what its own test concluded."""

    name: str
    counts: tuple[int, ...]
    """Length: higher when padded, same, lower, unscored. Injection: flipped by the
    payload, flipped by the control, cases."""
    status: str
    p_value: float


def _status_color(status: str) -> str:
    return FOUND if status == "FOUND" else (CLEAN if status == "clean" else UNSCORED)


def length_groups(panels: Sequence[tuple[str, Sequence[Group]]]) -> str:
    """Generated length probes by group (padding style, length added): how many items
    scored higher, the same, lower, or unscored when padded; each group's own status."""
    rows = max(len(groups) for _, groups in panels)
    with _figure("length-groups", 5.6, 1.2 + 0.34 * rows * len(panels)) as (fig, out):
        axes = fig.subplots(len(panels), 1, squeeze=False)
        parts = (("higher", FAIL), ("same", UNSCORED), ("lower", NEUTRAL),
                 ("unscored", "#dddddd"))
        for ax, (title, groups) in zip((a for row in axes for a in row), panels,
                                       strict=True):
            ys = list(range(len(groups)))[::-1]
            top = max([sum(g.counts) for g in groups] + [1])
            for y, g in zip(ys, groups, strict=True):
                left = 0
                for (label, color), count in zip(parts, g.counts, strict=True):
                    if count:
                        ax.barh(y, count, left=left, color=color, height=0.6, alpha=0.85,
                                label=label if y == ys[0] else None)
                    left += count
                ax.text(top * 1.03, y, f"{g.status} (p={g.p_value:.2g})", va="center",
                        fontsize=8, fontweight="bold", color=_status_color(g.status))
            ax.set_yticks(ys, [g.name for g in groups])
            _count_axis(ax, top, 1.45)
            ax.set_title(title, fontsize=9)
            ax.grid(axis="y", visible=False)
        handles = [_patch(color) for _, color in parts]
        fig.legend(handles, [label for label, _ in parts], loc="outside lower center",
                   ncols=4, frameon=False, fontsize=8)
        fig.suptitle("Length probe by group: score when padded", x=0.01, ha="left",
                     fontsize=10, fontweight="bold")
    return out[0]


def _patch(color: str) -> Rectangle:
    from matplotlib.patches import Rectangle

    return Rectangle((0, 0), 1, 1, facecolor=color, alpha=0.85)


def _count_axis(ax: Axes, top: int, room: float) -> None:
    """Whole-number ticks from 0 to ``top``; room to the right for the status text."""
    step = max(1, -(-top // 5))
    ax.set_xticks(range(0, top + 1, step))
    ax.spines["bottom"].set_bounds(0, top)
    ax.set_xlim(0, top * room)


def injection_kinds(groups: Sequence[Group]) -> str:
    """Generated injection probes by payload kind: failed responses the payload
    flipped to a pass, beside those the control suffix flipped; each kind's status."""
    with _figure("injection-kinds", 5.6, 1.3 + 0.5 * len(groups)) as (fig, out):
        ax = fig.subplots()
        ys = list(range(len(groups)))[::-1]
        top = max([g.counts[2] for g in groups] + [1])
        for y, g in zip(ys, groups, strict=True):
            ax.barh(y + 0.17, g.counts[0], height=0.32, alpha=0.85,
                    color=FAIL if g.status == "FOUND" else NEUTRAL,
                    label="flipped by the payload" if y == ys[0] else None)
            ax.barh(y - 0.17, g.counts[1], height=0.32, color=UNSCORED, alpha=0.85,
                    label="flipped by the control" if y == ys[0] else None)
            ax.text(top * 1.03, y, f"{g.status} ({g.counts[0]} vs {g.counts[1]} of "
                    f"{g.counts[2]}, p={g.p_value:.2g})", va="center", fontsize=8,
                    fontweight="bold", color=_status_color(g.status))
        ax.set_yticks(ys, [g.name for g in groups])
        _count_axis(ax, top, 1.9)
        ax.set_xlabel("failed responses flipped to a pass")
        ax.grid(axis="y", visible=False)
        fig.legend(loc="outside lower center", ncols=2, frameon=False, fontsize=8)
        fig.suptitle("Injection probe by payload kind", x=0.01, ha="left", fontsize=10,
                     fontweight="bold")
    return out[0]
