"""The soak's figures into docs: a plot (docs/soak-SETUP.png, matplotlib from
the [bench] extra) and, in docs/reliability.md between its soak markers, the
band each figure kept after the warm-up (the first fifth of the run)."""

from __future__ import annotations

from typing import Any

from tools.chaos.cluster import ROOT

DOC = ROOT / "docs" / "reliability.md"


def _band(values: list[float]) -> str:
    low, high = min(values), max(values)
    spread = 100 * (high - low) / high if high else 0.0
    return f"{low:,.0f} to {high:,.0f} (spread {spread:.0f}%)"


def write(setup: str, minutes: float, rate: float, retention: str,
          samples: list[dict[str, Any]]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    after = samples[len(samples) // 5:]  # past the warm-up
    t = [s["t"] / 60 for s in samples]
    series = [("RSS per process (MiB)", [[r / 1024 for r in s["rss_kib"]] for s in samples]),
              ("open file descriptors per process", [s["fds"] for s in samples]),
              ("store (MiB)", [[s["store_bytes"] / 2**20] for s in samples])]
    if "redis_keys" in samples[0]:
        series.append(("Redis keys", [[s["redis_keys"]] for s in samples]))
    fig, axes = plt.subplots(len(series), 1, figsize=(8, 2.2 * len(series)), sharex=True)
    for ax, (title, rows) in zip(axes, series, strict=True):
        for i in range(len(rows[0])):
            ax.plot(t, [r[i] for r in rows])
        ax.set_title(title, fontsize=9)
        ax.set_ylim(bottom=0)
    axes[-1].set_xlabel("minutes")
    fig.suptitle(f"soak, {setup}: {rate:g} operations/s for {minutes:g} min, "
                 f"--retention {retention}", fontsize=10)
    fig.tight_layout()
    fig.savefig(ROOT / "docs" / f"soak-{setup}.png", dpi=80)
    lines = [f"{setup}: {rate:g} operations/s for {minutes:g} min, `--retention {retention}`; "
             "after the warm-up (the first fifth):", ""]
    for i in range(len(samples[0]["rss_kib"])):
        lines.append(f"- process {i + 1}: RSS {_band([s['rss_kib'][i] for s in after])} KiB; "
                     f"file descriptors {_band([s['fds'][i] for s in after])}")
    lines.append(f"- store: {_band([s['store_bytes'] / 1024 for s in after])} KiB")
    if "redis_keys" in samples[0]:
        lines.append(f"- Redis: {_band([s['redis_keys'] for s in after])} keys, "
                     f"{_band([s['redis_bytes'] / 1024 for s in after])} KiB")
    lines += ["", f"![soak, {setup}](soak-{setup}.png)"]
    start, end = f"<!-- soak-{setup}:begin -->", f"<!-- soak-{setup}:end -->"
    text = DOC.read_text()
    head, _, rest = text.partition(start)
    _, _, tail = rest.partition(end)
    DOC.write_text(head + start + "\n" + "\n".join(lines) + "\n" + end + tail)
    print(f"wrote {DOC.relative_to(ROOT)} and docs/soak-{setup}.png")
