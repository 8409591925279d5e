"""Learning curves from `metrics.jsonl`: training loss and dev loss/BLEU against updates."""

from __future__ import annotations

from pathlib import Path

from nmt.errors import NmtError
from nmt.files import replaced_whole
from nmt.train.metrics import read_metrics


def plot_learning_curve(metrics_path: Path, output: Path | None = None) -> Path:
    """Training and dev loss, and dev BLEU, by update, from metrics.jsonl (or a run's folder) to a
    PNG (default: learning_curve.png beside it), or to the format `output`'s suffix names (a name
    without one gets .png). Returns the path written."""
    if metrics_path.is_dir():
        metrics_path = metrics_path / "metrics.jsonl"
    output = output or metrics_path.with_name("learning_curve.png")
    if output.is_dir():  # before .png is added, which would write DIR.png beside it
        raise NmtError(f"{output}: is a directory; name a file to write")
    output = output if output.suffix else output.with_name(output.name + ".png")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.backend_bases import FigureCanvasBase
    except ImportError:
        raise NmtError("nmt plot needs matplotlib: pip install 'nmt[plot]'") from None
    image_format, formats = output.suffix[1:].lower(), FigureCanvasBase.get_supported_filetypes()
    if image_format not in formats:
        raise NmtError(f"{output}: cannot draw a .{image_format} file; name one of {', '.join(sorted(formats))}")
    if not metrics_path.is_file():
        raise NmtError(f"{metrics_path}: metrics log not found (written by nmt train)")
    records = read_metrics(metrics_path)
    train = [r for r in records if r["kind"] == "train"]
    valid = [r for r in records if r["kind"] == "valid"]
    if not train and not valid:
        raise NmtError(f"{metrics_path}: no metrics yet")

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    left.plot([r["step"] for r in train], [r["loss"] for r in train], label="train (label-smoothed)")
    left.plot([r["step"] for r in valid], [r["nll"] for r in valid], "o-", label="dev (NLL)")
    left.set(xlabel="update", ylabel="loss per target token", title="Loss")
    left.legend()
    with_bleu = [r for r in valid if "bleu" in r]
    right.plot([r["step"] for r in with_bleu], [r["bleu"] for r in with_bleu], "o-", color="tab:green")
    right.set(xlabel="update", ylabel="BLEU", title="Dev BLEU (greedy)")
    for ax in (left, right):
        ax.grid(alpha=0.3)
    fig.suptitle(str(metrics_path.parent))
    fig.tight_layout()
    try:
        with replaced_whole(output, "wb") as f:  # an interrupted plot leaves the old one
            fig.savefig(f, format=image_format, dpi=100)
    finally:
        plt.close(fig)
    return output
