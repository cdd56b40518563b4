"""The message profile's figure: stacked bars of the channel shares of messages (and bytes)
per message-size range, the even distribution (one message from every rank to every other)
alongside."""

from __future__ import annotations

from pathlib import Path

from pxq import figures

COLOURS = {"self": "tab:blue", "intra_cmp": "tab:green", "inter_cmp": "tab:orange", "inter_node": "tab:red"}


def plot(
    ranges: list[str],
    channels: dict[str, str],
    count: list[dict[str, int]],
    nbytes: list[dict[str, int]],
    even: dict[str, float],
    path: Path,
    title: str,
) -> Path:
    """RANGES: the size ranges' labels; CHANNELS: channel key to its name, in stacking order;
    COUNT, NBYTES: per range, per channel; EVEN: the even distribution's share per channel."""
    plt = figures.pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(12.5, 4))
    for ax, data, label in ((axes[0], count, "messages"), (axes[1], nbytes, "bytes")):
        labels = [*ranges, "even"]
        bottom = [0.0] * len(labels)
        share_of_all = [sum(r.values()) for r in count]
        total = sum(share_of_all)
        for c, name in channels.items():
            vals = []
            for i in range(len(ranges)):
                n = sum(data[i].values())
                vals.append(100 * data[i][c] / n if n else 0.0)
            vals.append(100 * even.get(c, 0.0))
            ax.bar(labels, vals, bottom=bottom, color=COLOURS[c], label=name)
            bottom = [b + v for b, v in zip(bottom, vals)]
        if label == "messages":
            for i, n in enumerate(share_of_all):
                if n:
                    ax.text(i, 101, f"{100 * n / total:.0f}% of msgs", ha="center", fontsize=7)
        ax.set_ylim(0, 110)
        ax.set_ylabel(f"% of {label} in the range")
        ax.set_xlabel("message size; even: one message from every rank to every other")
    # Outside the panels, where no bar can be under it.
    axes[1].legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1), title="channel", title_fontsize=8)
    fig.suptitle(title, fontsize=10)
    return figures.save(fig, path)
