"""Text in a script the model's vocabulary lacks (`make bench-other-scripts`): the demo model
(English-German, trained on Latin script alone, without byte fallback) with decode.copy_unreadable
on (such text copied as a verbatim span, placed by alignment) and off (the model reads unknown
pieces), on test_2016_flickr (val with `--test data/multi30k/val`):
- as shipped (no line has such text);
- a speaker's name in another script before each line, "Иван: A man …", the references alike;
- a phrase in another script after each line, "A man … . — Добро пожаловать", the references alike;
- the lines whose names the references keep as written ("a Boston Terrier"), those names written
  in Cyrillic letters on both sides ("a Бостон Терриер");
- whole lines in another script: the sources spelled in Cyrillic letters, scored against
  themselves (what a user gets back for a line the model cannot read).

BLEU, BLEU without the other script's words on either side, and how many outputs keep every such
word of their reference. Writes experiments/robustness/results/other_scripts.json.

    python -m experiments.robustness.other_scripts [-c runs/demo/checkpoints/best.pt]
"""

from __future__ import annotations

import re
from pathlib import Path

from experiments.shared.demo_model import compare_settings, demo_parser, demo_test_set, score, write_study
from nmt.config import load_recipe
from nmt.decode.engines.engine import load_engine

RESULTS = Path(__file__).resolve().parent / "results"
NAMES = ["Иван", "Γιώργος", "王芳", "さくら", "김민준", "محمد", "Ольга", "Νίκος"]
PHRASES = ["Добро пожаловать", "東京タワー", "Καλημέρα", "서울", "北京欢迎你", "Парк Горького"]
_CYRILLIC = dict(zip("abcdefghijklmnopqrstuvwxyz", "абкдефгхийклмнопкрстуввхыз"))


def in_cyrillic(text: str) -> str:
    """Latin letters spelled letter by letter in Cyrillic ones, case kept."""
    def letter(c: str) -> str:
        cyrillic = _CYRILLIC.get(c.lower())
        return c if cyrillic is None else cyrillic.upper() if c.isupper() else cyrillic

    return "".join(letter(c) for c in text)


def foreign(word: str) -> bool:
    return any(c.isalpha() and ord(c) >= 0x370 for c in word)


def without(text: str) -> str:
    return " ".join(w for w in text.split() if not foreign(w))


def measure(outputs: list[str], refs: list[str]) -> dict:
    kept = sum(all(w.strip(".,:;\"'") in o for w in r.split() if foreign(w)) for o, r in zip(outputs, refs))
    return {"bleu": score(outputs, refs),
            "bleu_without_the_other_script": score([without(o) for o in outputs], [without(r) for r in refs]),
            "outputs_keeping_it": kept}


def names_in_cyrillic(sources: list[str], references: list[str]) -> tuple[list[str], list[str]]:
    """The lines with capitalized words that source and reference share (names), those words in
    Cyrillic on both sides."""
    forms = ([], [])
    for source, reference in zip(sources, references):
        shared = set(re.findall(r"\b[A-Z][a-z]{2,}\b", source)) & set(re.findall(r"\b[A-Z][a-z]{2,}\b", reference))
        if shared:
            pattern = re.compile(r"\b(" + "|".join(sorted(shared)) + r")\b")
            forms[0].append(pattern.sub(lambda m: in_cyrillic(m.group()), source))
            forms[1].append(pattern.sub(lambda m: in_cyrillic(m.group()), reference))
    return forms


def main() -> None:
    args = demo_parser().parse_args()
    checkpoint, sources, references = demo_test_set(args)
    recipe = load_recipe(args.recipe).decode
    settings = {f"copy_unreadable_{state}": recipe.model_copy(update={"copy_unreadable": state == "on"})
                for state in ("on", "off")}

    def speaker(lines):
        return [f"{NAMES[i % len(NAMES)]}: {line}" for i, line in enumerate(lines)]

    def phrase(lines):
        return [f"{line} — {PHRASES[i % len(PHRASES)]}" for i, line in enumerate(lines)]

    whole = [in_cyrillic(s) for s in sources]
    forms = {"as_shipped": (sources, references),
             "a_name_before_each_line": (speaker(sources), speaker(references)),
             "a_phrase_after_each_line": (phrase(sources), phrase(references)),
             "names_the_references_keep_in_cyrillic": names_in_cyrillic(sources, references),
             "whole_lines_in_cyrillic_against_themselves": (whole, whole)}
    result = compare_settings(load_engine([checkpoint]), forms, settings, measure)
    name = "other_scripts.json" if args.test.endswith("test_2016_flickr") else f"other_scripts_{Path(args.test).name}.json"
    write_study(RESULTS / name, checkpoint, args.test,
                {"names": NAMES, "phrases": PHRASES, **result})


if __name__ == "__main__":
    main()
