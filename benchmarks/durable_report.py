"""Tables, targets and the plot of the durable-store rows (benchmarks/durable.py)."""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from pathlib import Path

from .tables import NAN, ROOT, Row, Table, _f, _pct, _x, med

PLOT = ROOT / "docs" / "bench-growth.png"


@dataclass
class Growth:
    rate: float  # events/s the client received
    finished: bool  # the stream ended (else: cut at the limit)
    errors: int


Curve = dict[tuple[str, int], list[Growth]]
LABELS = ("ours memory", "ours SQLite", "ours PostgreSQL",
          "SDK memory", "SDK SQLite", "SDK PostgreSQL")


def growth_rate(curve: Curve, label: str, n: int) -> float:
    runs = curve.get((label, n))
    return statistics.median(g.rate for g in runs) if runs else NAN


def _at(table: Table, scenario: str, conc: int, label: str) -> float:
    return med(table.get(Row(scenario, "JSON-RPC", conc), {}).get(label))


def targets(table: Table, curve: Curve) -> list[str]:
    met_: list[str] = []
    missed: list[str] = []

    def check(name: str, value: float, goal: float, fmt: str, higher: bool = True) -> None:
        if value != value:
            missed.append(f"{name}: not measured")
            return
        met = value >= goal if higher else value <= goal
        (met_ if met else missed).append(f"{name}: {fmt.format(value)}")

    def ratio(a: float, b: float) -> float:
        return a / b if b and b == b and a == a else NAN

    check("SQLite SendMessage c=32 >= 75% of memory",
          ratio(_at(table, "SendMessage", 32, "ours SQLite"),
                _at(table, "SendMessage", 32, "ours memory")), 0.75, "{:.0%}")
    check("SQLite stream 100 events/s >= 50% of memory",
          ratio(_at(table, "stream 100", 4, "ours SQLite"),
                _at(table, "stream 100", 4, "ours memory")), 0.5, "{:.0%}")
    for store in ("memory", "SQLite", "PostgreSQL"):
        label = f"ours {store}"
        if (label, 100) in curve:
            check(f"{label}: events/s at N=10,000 within 20% of N=100",
                  ratio(growth_rate(curve, label, 10_000), growth_rate(curve, label, 100)),
                  0.8, "{:.2f}x")
    for store in ("SQLite", "PostgreSQL"):
        if any(k[0] == f"ours {store}" for k in curve):
            check(f"SendMessage c=32: ours on {store} >= 10x the SDK on {store}",
                  ratio(_at(table, "SendMessage", 32, f"ours {store}"),
                        _at(table, "SendMessage", 32, f"SDK {store}")), 10.0, "{:.1f}x")
    out = [f"Targets met ({len(met_)} of {len(met_) + len(missed)}): " + "; ".join(met_) + "."]
    if missed:
        out += ["", "Not met: " + "; ".join(missed) + "."]
    return out


def side_by_side(table: Table) -> list[str]:
    present = [lb for lb in LABELS if any(lb in by for by in table.values())]
    lines = ["| scenario | conc. | " + " | ".join(f"{lb} /s" for lb in present)
             + " | SQLite/memory (ours) | ours/SDK on SQLite | ours/SDK on PostgreSQL | "
             "p99 ms (ours SQLite / SDK SQLite) | errors |",
             "|" + "---|" * (len(present) + 7)]
    for row, by in table.items():
        rates = {lb: med(by.get(lb)) for lb in present}
        unit = " ev" if row.scenario.startswith("stream") else ""
        errors = sum(r.errors for rs in by.values() for r in rs)
        lines.append(
            f"| {row.scenario} | {row.concurrency} | "
            + " | ".join(f"{_f(rates[lb])}{unit}" for lb in present)
            + f" | {_pct(rates.get('ours SQLite', NAN), rates.get('ours memory', NAN))}"
            f" | {_x(rates.get('ours SQLite', NAN), rates.get('SDK SQLite', NAN))}"
            f" | {_x(rates.get('ours PostgreSQL', NAN), rates.get('SDK PostgreSQL', NAN))}"
            f" | {_f(med(by.get('ours SQLite'), 'p99_ms'), 1)} / "
            f"{_f(med(by.get('SDK SQLite'), 'p99_ms'), 1)} | {errors} |")
    return lines


def growth_table(curve: Curve, limit: float) -> list[str]:
    sizes = sorted({n for _, n in curve})
    lines = ["| store | " + " | ".join(f"N = {n:,} events/s" for n in sizes)
             + f" | {sizes[-1]:,} / {sizes[0]:,} | errors |", "|" + "---|" * (len(sizes) + 3)]
    for label in LABELS:
        if (label, sizes[0]) not in curve:
            continue
        cells = []
        for n in sizes:
            runs = curve.get((label, n), [])
            cut = "" if all(g.finished for g in runs) else f" (cut at {limit:g} s)"
            cells.append(f"{_f(growth_rate(curve, label, n))}{cut}")
        errors = sum(g.errors for n in sizes for g in curve.get((label, n), [])
                     if g.finished)
        last, first = (growth_rate(curve, label, n) for n in (sizes[-1], sizes[0]))
        lines.append(f"| {label} | " + " | ".join(cells) + f" | {_x(last, first, 2)} | {errors} |")
    return lines


def render(table: Table, curve: Curve, limit: float, note: str) -> list[str]:
    parts = ["### Durable stores side by side", ""]
    if note:
        parts += [note, ""]
    parts += [*targets(table, curve), "", "JSON-RPC, medians; `ev`: events/s.", "",
              *side_by_side(table), ""]
    if curve:
        parts += ["#### Growth: `stream N 1024`, one stream at a time (plotted below)", "",
                  *growth_table(curve, limit), "",
                  "![events/s against N](bench-growth.png)", ""]
    return parts


def plot(curve: Curve, path: Path = PLOT) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = sorted({n for _, n in curve})
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for label in LABELS:
        if (label, sizes[0]) in curve:
            ax.plot(sizes, [growth_rate(curve, label, n) for n in sizes],
                    "o-" if label.startswith("ours") else "s--", label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xticks(sizes, [f"{n:,}" for n in sizes])
    ax.set_xlabel("N: 1 KiB chunks streamed into one artifact")
    ax.set_ylabel("events/s (one stream)")
    ax.set_title("Per-event cost as a task grows (make bench)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
