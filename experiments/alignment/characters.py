"""Guided alignment into a language written without spaces (`make bench-guided-characters`): does
linking words character by character (data.word_alignments: dice) align such a side, where links
between whitespace words, of which such a sentence is one, cannot?

    python -m experiments.alignment.characters [--minutes 6] [--seed 1]

The target is Multi30k's English written as a language without spaces: each word (lowercased,
without the punctuation at its edges) one Han character, the sentence's words in reverse order,
"。" at the end. So the true alignment is known: an output character belongs to the source words
written with it. (The 2,500 most frequent words have characters of their own; rarer ones share
500 more.) Three models train side by side for the same minutes (the demo's settings, one thread
each):
    unguided             the demo's recipe as it is (alignments: the mean of all layers)
    guided_spaces        train.guided_alignment.weight 0.1, dice links between whitespace words
                         (given as a Pharaoh file: each target sentence is one word)
    guided_characters    the same with data.word_alignments: dice, which links each character
Each translates test_2016_flickr (the recipe's decode settings) with --alignments: BLEU (sacrebleu,
tokenize zh), and against the true alignment, over the output characters that a source word is
written with: the precision of their links (a link's source word is written with its character)
and the recall (the characters with a link to a word written with them). Results: experiments/alignment/results/guided_characters.json.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from experiments.alignment.guided import DEMO, GUIDED
from experiments.shared.runs import nmt, run_facts
from nmt.data.corpus import read_lines
from nmt.data.word_pairs import WordPairs, word_key
from nmt.data.words import word_spans
from nmt.info import checkpoint_info
from tools.results import write_json

ROOT = Path(__file__).resolve().parents[2]
RESULTS = Path(__file__).resolve().parent / "results"
WORK = ROOT / "runs" / "guided_characters"
RECIPE = "recipes/multi30k_en_de.yaml"
SPLITS = ("train", "val", "test_2016_flickr")
OWN_CHARACTERS, SHARED_CHARACTERS = 2500, 500
FIRST_HAN = 0x4E00


def words(line: str) -> list[str]:
    return [key for key in map(word_key, line.split()) if key]


def character_of(train: list[str]) -> dict[str, str]:
    """Each word of the English training side its Han character, by frequency rank."""
    ranked = [word for word, _ in Counter(w for line in train for w in words(line)).most_common()]
    return {word: chr(FIRST_HAN + (rank if rank < OWN_CHARACTERS else OWN_CHARACTERS + rank % SHARED_CHARACTERS))
            for rank, word in enumerate(ranked)}


def written(line: str, characters: dict[str, str]) -> str:
    """The line without spaces, its words' characters in reverse order (a word unseen in training:
    the last shared character)."""
    unseen = chr(FIRST_HAN + OWN_CHARACTERS + SHARED_CHARACTERS - 1)
    return "".join(characters.get(w, unseen) for w in reversed(words(line))) + "。"


def corpus(folder: Path) -> dict[str, str]:
    """The en / zh files of each split under `folder`; the character of each English word."""
    english = {split: list(read_lines(ROOT / "data" / "multi30k" / f"{split}.en.gz")) for split in SPLITS}
    characters = character_of(english["train"])
    folder.mkdir(parents=True, exist_ok=True)
    for split, lines in english.items():
        (folder / f"{split}.en").write_text("\n".join(lines) + "\n", encoding="utf-8")
        (folder / f"{split}.zh").write_text("\n".join(written(line, characters) for line in lines) + "\n",
                                            encoding="utf-8")
    return characters


def links_between_spaces(folder: Path) -> Path:
    """Dice's links as they are between whitespace words (each target sentence one word), as a
    Pharaoh file: the dictionary and competitive linking of nmt.data.word_pairs over `split()`."""
    pairs = list(zip(*((folder / f"train.{lang}").read_text(encoding="utf-8").splitlines() for lang in ("en", "zh"))))
    dictionary = WordPairs(pairs, limit=None, keys=lambda text: [k for k in map(word_key, text.split()) if k])
    path = folder / "train.spaces.align"
    path.write_text("\n".join(" ".join(f"{s}-{t}" for s, t in sorted(dictionary.links(s.split(), t.split()).items()))
                              for s, t in pairs) + "\n")
    return path


def judged(outputs: list[dict], sources: list[str], characters: dict[str, str]) -> dict:
    """Precision and recall of the links of the output characters that a source word is written
    with (those of other characters cannot be right, and are left out)."""
    links = right = chars = found = 0
    for out, source in zip(outputs, sources):
        source_words = source.split()
        best = out["hypotheses"][0]
        text = best["text"]
        linked: dict[int, set[int]] = {}
        for pair in best.get("alignment", "").split():
            s, t = map(int, pair.split("-"))
            linked.setdefault(t, set()).add(s)
        own = {characters.get(word_key(w)) for w in source_words} - {None}
        for t, char in enumerate(text[a:b] for a, b in word_spans(text)):  # the words the alignment numbers
            if char not in own:  # a character no source word is written with: no link of it can be right
                continue
            hits = [s for s in linked.get(t, ()) if characters.get(word_key(source_words[s])) == char]
            links += len(linked.get(t, ()))
            right += len(hits)
            chars += 1
            found += bool(hits)
    return {"links": links, "precision": round(right / max(links, 1), 4),
            "characters_of_source_words": chars, "recall": round(found / max(chars, 1), 4)}


def main() -> None:
    import sacrebleu

    from experiments.alignment.guided import train_side_by_side

    parser = argparse.ArgumentParser()
    parser.add_argument("--minutes", type=float, default=6.0)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    data = WORK / "data"
    characters = corpus(data)
    spaces = links_between_spaces(data)
    base = DEMO + ["data.tgt_lang=zh", f"data.train={data / 'train'}", f"data.valid={data / 'val'}",
                   f"data.test={data / 'test_2016_flickr'}", "tokenizer.character_coverage=1.0",
                   f"train.seed={args.seed}"]
    runs = {"unguided": [], "guided_spaces": GUIDED + [f"data.word_alignments={spaces}"],
            "guided_characters": GUIDED + ["data.word_alignments=dice"]}
    folder = WORK if args.seed == 1 else WORK / f"seed{args.seed}"
    runs = {name: base + [f"output_dir={folder / name}"] + settings for name, settings in runs.items()}
    train_side_by_side(runs, args.minutes)
    sources = (data / "test_2016_flickr.en").read_text(encoding="utf-8").splitlines()
    references = (data / "test_2016_flickr.zh").read_text(encoding="utf-8").splitlines()
    results = {}
    for name in runs:
        checkpoint = folder / name / "checkpoints" / "best.pt"
        out = folder / name / "test.jsonl"
        nmt("translate", "-c", str(checkpoint), "--decode-from", RECIPE, "-i", str(data / "test_2016_flickr.en"),
            "-o", str(out), "--output-format", "jsonl", "--alignments", "--threads", "2")
        outputs = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
        info = checkpoint_info(checkpoint)
        bleu = sacrebleu.corpus_bleu([o["hypotheses"][0]["text"] for o in outputs], [references], tokenize="zh")
        results[name] = {"updates": info["step"], "training_minutes": info["training_minutes"],
                         **run_facts(folder / name), "bleu": round(bleu.score, 2),
                         "alignment": judged(outputs, sources, characters)}
        print(name, results[name], flush=True)
    write_json(RESULTS / ("guided_characters.json" if args.seed == 1 else f"guided_characters_seed{args.seed}.json"), {
        "recipe": RECIPE, "settings": base, "seed": args.seed, "minutes": args.minutes, "side_by_side": list(runs),
        "target": "Multi30k English, each word one Han character, in reverse order, no spaces",
        "guided": {"weight": 0.1, "layer": -2, "heads": 1}, "test": "test_2016_flickr", "runs": results})


if __name__ == "__main__":
    main()
