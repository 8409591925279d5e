"""How well nmt's word alignments agree with an independent aligner (`make bench-alignment`):
the demo model (or -c CKPT) translates test_2016_flickr; each output is aligned to its source by
each decoder layer's attention and by their mean (nmt's rule, nmt.decode.text.alignment), each with
and without covering (linking every source word no output word chose to its likeliest output
word); eflomal, trained on Multi30k train plus these pairs, is the reference (sure links: both
directions agree; possible: either direction). Writes experiments/alignment/results/alignment_quality.json with the
alignment error rate (AER; Och and Ney 2003), precision and recall of each.

    python -m experiments.alignment.alignment_quality [-c runs/demo/checkpoints/best.pt]
"""

from __future__ import annotations

from pathlib import Path

from experiments.shared.demo_model import demo_parser, demo_test_set
from experiments.shared.reference_alignment import link_sets
from nmt.data.corpus import read_lines
from nmt.decode.text.alignment import align_batch, layer_attention, pair_rows, pharaoh
from nmt.data.words import piece_words
from nmt.decode.engines.engine import load_engine
from nmt.decode.translate import translate_lines
from nmt.info import checkpoint_info
from tools.results import write_json

ROOT = Path(__file__).resolve().parents[2]
RESULTS = Path(__file__).resolve().parent / "results"


def pairs(line: str) -> set[tuple[int, int]]:
    return {tuple(int(x) for x in pair.split("-")) for pair in line.split()}


def aer(predicted: list[str], sure: list[set], possible: list[set]) -> dict:
    a_s = a_p = n_a = n_s = 0
    for line, s, p in zip(predicted, sure, possible):
        links = pairs(line)
        a_s, a_p, n_a, n_s = a_s + len(links & s), a_p + len(links & p), n_a + len(links), n_s + len(s)
    return {"aer": round(1 - (a_s + a_p) / (n_a + n_s), 4), "precision": round(a_p / n_a, 4),
            "recall": round(a_s / n_s, 4)}


def variants(translator, sources: list[list[int]], outputs: list[list[int]], batch: int = 100) -> dict[str, list[str]]:
    """Each pair's Pharaoh alignment by each layer and by the layers' mean, covered or not."""
    src_piece, tgt_piece = translator.src_tokenizer.id_to_piece, translator.tgt_tokenizer.id_to_piece
    lines: dict[str, list[str]] = {}
    for start in range(0, len(sources), batch):
        ss, oo = sources[start:start + batch], outputs[start:start + batch]
        layers = layer_attention(translator.model, ss, oo)
        named = {f"layer_{i}": w for i, w in enumerate(layers)}
        named["mean_of_layers"] = sum(layers) / len(layers)
        for name, weights in named.items():
            for i, (s, o) in enumerate(zip(ss, oo)):
                rows = pair_rows(weights[i], len(s), len(o))
                words = piece_words([src_piece(t) for t in s]), piece_words([tgt_piece(t) for t in o])
                lines.setdefault(f"{name}_covered", []).append(pharaoh(rows, *words, cover=True))
                lines.setdefault(name, []).append(pharaoh(rows, *words, cover=False))
    return lines


def main() -> None:
    args = demo_parser().parse_args()
    checkpoint, sources, _ = demo_test_set(args)
    translator = load_engine([checkpoint])
    hyps = [h[0] for h in translate_lines(translator, sources, translator.recipe.decode.model_copy(
        update={"copy_verbatim": False}))]
    kept = [i for i, h in enumerate(hyps) if h.tokens]
    src_ids = [translator.src_tokenizer.encode([sources[i]])[0] for i in kept]
    out_ids = [hyps[i].tokens for i in kept]
    outputs = [translator.tgt_tokenizer.decode(ids) for ids in out_ids]
    train = [list(read_lines(ROOT / f"data/multi30k/train.{lang}.gz")) for lang in ("en", "de")]
    sure, possible = link_sets([sources[i] for i in kept], outputs, *train)
    src_piece, tgt_piece = translator.src_tokenizer.id_to_piece, translator.tgt_tokenizer.id_to_piece
    rule = align_batch(translator.alignment_attention(src_ids, out_ids), src_ids, out_ids,
                       [[src_piece(t) for t in s] for s in src_ids], [[tgt_piece(t) for t in o] for o in out_ids])
    found = variants(translator, src_ids, out_ids)
    result = {"checkpoint": str(checkpoint), "updates": checkpoint_info(checkpoint)["step"], "test": args.test,
              "pairs": len(kept), "reference": "eflomal on Multi30k train + these pairs (sure: both directions)",
              "nmt_rule_is_mean_of_layers_covered": rule == found["mean_of_layers_covered"],
              **{name: aer(lines, sure, possible) for name, lines in sorted(found.items())}}
    print(result)
    write_json(RESULTS / "alignment_quality.json", result)


if __name__ == "__main__":
    main()
