"""Which attention a CTranslate2 export of an unguided model should return for alignments
(`make bench-export-attention`).

CTranslate2 returns the mean attention of one decoder layer's first heads (its alignment_layer and
alignment_heads), not the mean of every layer that nmt's own engine aligns with. An export of a
model trained with guided alignment returns its guided heads; for any other, which layer? The
demo model (unguided) places the tag stress forms of `make bench-robustness` (one word in <b>, two
words in an <a href ...>) as markup:
    nmt               nmt's engine over the checkpoint: the mean of every layer's heads
    ctranslate2_none  the export with no attention read, tags placed along the diagonal (how an
                      unguided export placed them before its exports returned attention)
    ctranslate2_layer_L  the export returning decoder layer L's heads, all of them (from 0)
Where each tag went is judged against eflomal on Multi30k train plus the judged pairs (the
reference of bench-robustness and bench-guided-alignment): "exact" where its output words span
what the reference links its source words to, "overlap" where they share a word.
Results: experiments/alignment/results/export_attention.json. The second model of the README's
table: the demo's settings with `--set model.decoder_layers=6 --set output_dir=runs/deep_decoder`
(nmt tokenizer, prepare, train), then `-c runs/deep_decoder/checkpoints/best.pt --out
export_attention_deep_decoder`.

    python -m experiments.alignment.export_attention [-c runs/demo/checkpoints/best.pt] [--out export_attention]
"""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path

from experiments.alignment.guided import RESULTS, ROOT, TEST, tag_placement
from experiments.shared.demo_model import demo_checkpoint, demo_parser
from nmt.checkpoint import open_checkpoint
from nmt.config import load_recipe
from nmt.data.corpus import read_lines
from nmt.decode.engines.engine import load_engine
from nmt.export.ctranslate2 import attention_for_alignments, export_checkpoint
from nmt.info import checkpoint_info
from tools.results import write_json


def main() -> None:
    parser = demo_parser()
    parser.add_argument("--out", default="export_attention", help="The results' file name in results/.")
    args = parser.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    checkpoint = demo_checkpoint(args.checkpoint)
    sources = list(read_lines(Path(f"{TEST}.en.gz")))  # tag_placement scores against its German
    train = [list(read_lines(ROOT / f"data/multi30k/train.{lang}.gz")) for lang in ("en", "de")]
    cfg = load_recipe(ROOT / args.recipe).decode
    own = load_engine([checkpoint])
    if own.model.alignment_heads:
        raise SystemExit(f"{checkpoint}: trained with guided alignment; its exports return the guided heads")
    model = own.recipe.model
    placements = {"nmt": tag_placement(own, cfg, sources, train)}
    print("nmt", placements["nmt"], flush=True)
    attentions = {"ctranslate2_none": None} | {f"ctranslate2_layer_{layer}": (layer, model.heads)
                                                for layer in range(model.decoder_layers)}
    for name, attention in attentions.items():
        with tempfile.TemporaryDirectory() as scratch:
            export_checkpoint(open_checkpoint(checkpoint), Path(scratch) / "ct2", attention=attention)
            engine = load_engine([Path(scratch) / "ct2"])
            if attention is None:  # read no attention: tags along the diagonal
                engine.capabilities = replace(engine.capabilities, alignments=False)
            placements[name] = tag_placement(engine, cfg, sources, train)
        print(name, placements[name], flush=True)
    info = checkpoint_info(checkpoint)
    write_json(RESULTS / f"{args.out}.json", {
        "checkpoint": str(checkpoint), "updates": info["step"], "decoder_layers": model.decoder_layers,
        "heads": model.heads, "export_default": dict(zip(("layer", "heads"), attention_for_alignments(own.recipe))),
        "recipe": args.recipe, "test": str(TEST.relative_to(ROOT)),
        "reference": "eflomal links (intersection, else union) on Multi30k train + the judged pairs",
        "placements": placements})


if __name__ == "__main__":
    main()
