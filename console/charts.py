"""A stacked bar chart drawn on the server as SVG geometry (the template writes the elements):
no JavaScript and no chart library."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from console.selectors import DailySeries

WIDTH = 900
HEIGHT = 260
LEFT = 48  # room for the axis labels
BOTTOM = 24
TOP = 10
# Distinct and colour-blind friendly (Okabe-Ito); series past the last reuse the palette.
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000"]


@dataclass(frozen=True)
class Bar:
    x: float
    y: float
    width: float
    height: float
    colour: str
    title: str


@dataclass(frozen=True)
class Tick:
    y: float
    label: str


@dataclass(frozen=True)
class DayLabel:
    x: float
    label: str
    anchor: str  # SVG text-anchor: the last label ends at the right edge instead of overflowing it


@dataclass(frozen=True)
class LegendEntry:
    label: str
    colour: str
    total: int


@dataclass(frozen=True)
class Chart:
    width: int
    height: int
    left: int
    baseline: float
    bars: list[Bar]
    ticks: list[Tick]
    days: list[DayLabel]
    legend: list[LegendEntry]
    maximum: int


def _nice_ceiling(value: int) -> int:
    """The smallest 1, 2 or 5 times a power of ten that is at least `value` (at least 1)."""
    magnitude = 1
    while True:
        for step in (1, 2, 5):
            if step * magnitude >= value:
                return step * magnitude
        magnitude *= 10


def stacked_bars(*, days: list[date], series: list[DailySeries], unit: str) -> Chart:
    """One bar per day, one coloured segment per series, a y axis with five ticks."""
    per_day = [sum(s.values[i] for s in series) for i in range(len(days))]
    maximum = _nice_ceiling(max(per_day, default=0))
    plot_height = HEIGHT - TOP - BOTTOM
    slot = (WIDTH - LEFT) / max(len(days), 1)
    bar_width = slot * 0.7
    baseline = float(HEIGHT - BOTTOM)
    bars: list[Bar] = []
    for i, day in enumerate(days):
        y = baseline
        for n, s in enumerate(series):
            value = s.values[i]
            if not value:
                continue
            height = value / maximum * plot_height
            y -= height
            bars.append(
                Bar(
                    x=round(LEFT + i * slot + (slot - bar_width) / 2, 2),
                    y=round(y, 2),
                    width=round(bar_width, 2),
                    height=round(height, 2),
                    colour=PALETTE[n % len(PALETTE)],
                    title=f"{day:%Y-%m-%d} {s.label}: {value} {unit}",
                )
            )
    # A nice ceiling is 1, 2 or 5 times a power of ten: its half is a whole number or ends in .5.
    ticks = [Tick(y=round(baseline - plot_height * share, 2), label=f"{maximum * share:,g}") for share in (0, 0.5, 1)]
    last = len(days) - 1
    labels = [
        DayLabel(
            x=float(WIDTH) if i == last else round(LEFT + i * slot + slot / 2, 2),
            label=f"{day:%b %-d}",
            anchor="end" if i == last else "middle",
        )
        for i, day in enumerate(days)
        if (i % 5 == 0 and last - i >= 3) or i == last
    ]
    legend = [LegendEntry(label=s.label, colour=PALETTE[n % len(PALETTE)], total=s.total) for n, s in enumerate(series)]
    return Chart(
        width=WIDTH,
        height=HEIGHT,
        left=LEFT,
        baseline=baseline,
        bars=bars,
        ticks=ticks,
        days=labels,
        legend=legend,
        maximum=maximum,
    )
