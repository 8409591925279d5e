"""Text as users have it (`make bench-robustness`): the demo model (or -c CKPT) on test_2016_flickr
in the forms real input comes in, with the recipe's decode settings. Writes experiments/robustness/results/robustness.json.

    python -m experiments.robustness.robustness [-c runs/demo/checkpoints/best.pt] [--recipe recipes/multi30k_en_de.yaml]
                               [--compare runs/demo_augmented/checkpoints/best.pt]

Where the --compare models exist (by default the demo trained with data.augment: `make
demo-augmented`, in capitals, Title Case and with typos, and `make demo-tagged`, with tags and
verbatim items), every form is measured for each too, under "compared_with"; each model's entry
says how it was augmented.

Forms, each scored with sacreBLEU against the reference (case forms lowercased, as their
translations cannot be expected to restore the reference's case):
- plain: the test set as shipped, with sentence splitting on and off (clean input must not pay:
  BLEU and decoding time of both);
- paragraphs: every three consecutive lines joined by a space into one line, their references
  likewise, translated with splitting on and off, against the same sentences translated one per
  line and joined in threes (the fair comparison: the same references, the same joining);
- upper and title case: every source line in str.upper() / str.title(), with decode.normalize_case
  on and off;
- tags: one word of each line in <b>...</b>, or two in <a href="..." title="a > b">...</a>,
  translated as markup (--input-format markup) and as plain text (what a model trained with tags
  gets), the latter with decode.copy_verbatim on and off: outputs well-formed with exactly the source's tags, BLEU of the output's text against
  plain input's, and in those outputs where the tag went, judged against an independent aligner
  (experiments.shared.reference_alignment, eflomal);
- typos: every source line with one typo (nmt.data.augment's, seed 1);
- verbatim: a number, date, price, URL, e-mail address, emoji, code or handle inserted between
  two words of each of the first 300 lines, with decode.copy_verbatim on and off: outputs that
  contain it unchanged, and BLEU with it taken out against the same lines translated plain.
"""

from __future__ import annotations

import random
from pathlib import Path

from experiments.robustness.stress_forms import tagged, tagged_words, tags_of, text_of, with_verbatim, without
from experiments.shared.demo_model import demo_parser, demo_test_set, score, translated
from experiments.shared.reference_alignment import placement, reference_links
from nmt.config import load_recipe
from nmt.data.augment import with_typo
from nmt.data.corpus import read_lines
from nmt.decode.engines.engine import load_engine
from nmt.decode.text.paragraphs import sentences_of
from nmt.info import checkpoint_info
from tools.results import write_json

ROOT = Path(__file__).resolve().parents[2]
RESULTS = Path(__file__).resolve().parent / "results"


def in_threes(lines: list[str]) -> list[str]:
    return [" ".join(lines[i:i + 3]) for i in range(0, len(lines), 3)]


def main() -> None:
    parser = demo_parser()
    parser.add_argument("--compare", nargs="*", default=["runs/demo_augmented/checkpoints/best.pt",
                                                         "runs/demo_tagged/checkpoints/best.pt"],
                        help="Other models (make demo-augmented, make demo-tagged: trained with data.augment), "
                             "each measured the same way where it exists.")
    args = parser.parse_args()
    checkpoint, sources, references = demo_test_set(args)
    train = [list(read_lines(ROOT / f"data/multi30k/train.{lang}.gz")) for lang in ("en", "de")]
    result = measure(checkpoint, args, sources, references, train)
    result["compared_with"] = [measure(Path(other), args, sources, references, train)
                               for other in args.compare if Path(other).is_file()]
    print(result)
    write_json(RESULTS / "robustness.json", result)


def measure(checkpoint: Path, args, sources: list[str], references: list[str], train: list[list[str]]) -> dict:
    """Every form, translated by `checkpoint` with the recipe's decode settings."""
    translator = load_engine([checkpoint])
    on = load_recipe(Path(args.recipe)).decode
    off = on.model_copy(update={"split_sentences": False})

    def translate(lines: list[str], cfg, markup: bool = False) -> tuple[list[str], float]:
        return translated(translator, lines, cfg, markup)

    forms: dict = {}
    plain = {}
    verbatim_off = on.model_copy(update={"copy_verbatim": False})
    for name, cfg in (("split_off", off), ("split_on", on), ("split_off_again", off), ("split_on_again", on),
                      ("copy_verbatim_off", verbatim_off), ("copy_verbatim_on", on)):
        hypotheses, seconds = translate(sources, cfg)
        plain[name] = {"seconds": round(seconds, 1), **score(hypotheses, references)}
        if name == "split_on":
            one_per_line = hypotheses
    forms["plain"] = plain | {"lines_of_several_sentences": sum(len(sentences_of(s, "en")) > 1 for s in sources)}
    paragraphs, paragraph_refs = in_threes(sources), in_threes(references)
    forms["paragraphs_of_3"] = {"lines": len(paragraphs),
                                "one_per_line_joined": score(in_threes(one_per_line), paragraph_refs)}
    for name, cfg in (("split_on", on), ("split_off", off)):
        hypotheses, seconds = translate(paragraphs, cfg)
        forms["paragraphs_of_3"][name] = {"seconds": round(seconds, 1), **score(hypotheses, paragraph_refs)}
    as_is = on.model_copy(update={"normalize_case": False})
    for name, change in (("uppercase", str.upper), ("title_case", str.title)):
        forms[name] = {}
        for setting, cfg in (("normalize_case_on", on), ("normalize_case_off", as_is)):
            hypotheses, _ = translate([change(s) for s in sources], cfg)
            forms[name][setting] = score(hypotheses, references, lowercase=True)
            forms[name][setting]["all_caps_outputs"] = sum(h.isupper() for h in hypotheses)
    forms["plain_lowercased"] = score(one_per_line, references, lowercase=True)
    rng = random.Random(1)
    forms["typos"] = score(translate([with_typo(s, rng) for s in sources], on)[0], references)
    forms |= tag_forms(translate, on, sources, references, one_per_line, train)
    forms["verbatim"] = verbatim_form(translate, on, verbatim_off, sources[:300], references[:300])
    info = checkpoint_info(checkpoint)
    return {"checkpoint": str(checkpoint), "updates": info["step"], "training_minutes": info["training_minutes"],
            "augment": translator.recipe.data.augment.model_dump(), "recipe": args.recipe, "test": args.test,
            "threads": args.threads, "sentences": len(sources), "forms": forms}


def tag_forms(translate, cfg, sources: list[str], references: list[str], plain_outputs: list[str],
              train: list[list[str]]) -> dict:
    forms, judged = {}, []
    plain_bleu = score(plain_outputs, references)["bleu"]
    for width, name in ((1, "tags_one_word"), (2, "tags_two_words")):
        lines, spans = tagged(sources, width)
        form: dict = {"lines": len(lines), "plain_input_bleu": plain_bleu}
        verbatim_off = cfg.model_copy(update={"copy_verbatim": False})  # the URL in <a href> left where it is
        for setting, markup, setting_cfg in (("markup", True, cfg), ("as_plain_text", False, cfg),
                                             ("as_plain_text_copy_verbatim_off", False, verbatim_off)):
            outputs, seconds = translate(lines, setting_cfg, markup)
            same = [tags_of(out) == tags_of(line) for out, line in zip(outputs, lines)]
            form[setting] = {"seconds": round(seconds, 1), "same_tags_well_formed": sum(same),
                             **score([text_of(out) for out in outputs], references)}
            judged.append((name, setting, lines, spans, outputs, same))
        forms[name] = form
    # Where the tags went (in the outputs that kept them): one alignment run over the training
    # corpus and every judged pair. A model trained to keep tags in its text is judged the same way.
    pairs = [(text_of(line), text_of(out)) for *_, lines, _, outputs, _ in judged for line, out in zip(lines, outputs)]
    links = iter(reference_links([p[0] for p in pairs], [p[1] for p in pairs], *train))
    for name, setting, lines, spans, outputs, same in judged:
        verdicts = [placement(reference, range(first, last + 1), tagged_words(out)) if first >= 0 and kept else None
                    for (first, last), out, kept, reference in zip(spans, outputs, same, links)]
        counted = [v for v in verdicts if v is not None]
        forms[name][setting]["placement"] = {
            "judged": len(counted), "exact": round(counted.count("exact") / max(len(counted), 1), 4),
            "overlap_or_exact": round((counted.count("exact") + counted.count("overlap")) / max(len(counted), 1), 4),
            "reference": "eflomal links (intersection, else union) on Multi30k train + these pairs"}
    return forms


def verbatim_form(translate, on, off, sources: list[str], references: list[str]) -> dict:
    lines, items = with_verbatim(sources)
    plain, _ = translate(sources, on)
    form: dict = {"lines": len(lines), "items": sorted(set(items)),
                  "same_lines_plain": score(plain, references)}
    for setting, cfg in (("copy_verbatim_on", on), ("copy_verbatim_off", off)):
        outputs, seconds = translate(lines, cfg)
        form[setting] = {"seconds": round(seconds, 1), "copied": sum(item in out for item, out in zip(items, outputs)),
                         "item_taken_out": score([without(out, item) for item, out in zip(items, outputs)], references)}
    return form


if __name__ == "__main__":
    main()
