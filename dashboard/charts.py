"""The overview's plot, drawn on the server as SVG shapes (the dashboard runs no script): memories
written per day, stacked by agent. Pure arithmetic over what memories.selectors.memory_writes_per_day
returns; the template only draws the rectangles."""

from dataclasses import dataclass
from datetime import date

WIDTH = 600
HEIGHT = 160
AXIS = 18  # room under the bars for the date labels
MAX_AGENTS = 5  # more agents than this share one "other agents" colour
COLOURS = ("#2f6fb0", "#d9822b", "#3a9b5c", "#b8456b", "#7a5cc2", "#8a8a8a")


@dataclass(frozen=True)
class Bar:
    x: float
    y: float
    width: float
    height: float
    colour: str
    title: str


@dataclass(frozen=True)
class Chart:
    bars: list[Bar]
    legend: list[tuple[str, str, int]]  # agent, colour, total
    labels: list[tuple[float, str]]  # x, text
    peak: int
    total: int
    width: int = WIDTH
    height: int = HEIGHT


def writes_chart(dates: list[date], series: dict[str, list[int]]) -> Chart:
    ranked = sorted(series.items(), key=lambda item: (-sum(item[1]), item[0]))
    shown = ranked[:MAX_AGENTS]
    if len(ranked) > MAX_AGENTS:
        rest = [sum(day) for day in zip(*(counts for _agent, counts in ranked[MAX_AGENTS:]), strict=True)]
        shown.append(("other agents", rest))
    days = len(dates)
    totals = [sum(counts[n] for _agent, counts in shown) for n in range(days)]
    peak = max(totals, default=0)
    slot = WIDTH / max(days, 1)
    plot = HEIGHT - AXIS
    bars = []
    for n, day in enumerate(dates):
        base = plot
        for index, (agent, counts) in enumerate(shown):
            if not counts[n]:
                continue
            height = plot * counts[n] / peak
            base -= height
            bars.append(
                Bar(
                    x=round(n * slot + 1, 2),
                    y=round(base, 2),
                    width=round(max(slot - 2, 1), 2),
                    height=round(height, 2),
                    colour=COLOURS[index],
                    title=f"{day.isoformat()}: {counts[n]} by {agent}",
                )
            )
    # A date every week, kept off both edges so that no label is cut.
    labels = [
        (round(n * slot + slot / 2, 2), day.strftime("%b %d"))
        for n, day in enumerate(dates)
        if n % 7 == 1 and n < days - 3
    ]
    legend = [(agent, COLOURS[index], sum(counts)) for index, (agent, counts) in enumerate(shown)]
    return Chart(bars=bars, legend=legend, labels=labels, peak=peak, total=sum(totals))
