"""Quality at equal minutes: nmt, eole and JoeyNMT, each trained on Multi30k en→de for the same
wall-clock time on this host's 2 CPU cores, one after the other, with the demo's settings (a
4+4-layer pre-LN Transformer of d_model 128, 4 heads, d_ff 256, dropout 0.1, tied embeddings,
joint BPE of 8,000 pieces, batches of 1,024 tokens, Adam (0.9, 0.98), peak rate 0.004 after 400
warm-up updates then its inverse square root, label smoothing 0.1), then test_2016_flickr
translated with beam 4 and scored by sacreBLEU.

    python -m experiments.peers.quality [--minutes 10] [--runs eole,nmt_matched,joeynmt,nmt_demo]
    python -m experiments.peers.quality --nmt-updates 2200,876
    python -m experiments.peers.quality --seed 7    (every toolkit's seed, in place of its configuration's)

The runs:
- eole, JoeyNMT: experiments/peers/{eole,joeynmt}.{sh,yaml} (their virtual environments and data as
  `make bench-peers` sets them up, under $PEERS_HOME); stopped by the clock, each from its last
  weights (JoeyNMT saves them when stopped; eole every 100 updates).
- nmt_matched: the same schedule and no validation, its last weights; translated twice, with beam 4
  alone (length penalty α 1: log P / |Y|, as eole's default) and with the recipe's decoding.
- nmt_demo: `make demo`'s settings as they are (the rate cooled down to 0 over the last 30 % of
  the minutes, a validation on 300 dev sentences every 500 updates picking best.pt), decoded as
  the recipe says.
nmt's runs train on the demo's prepared data and tokenizer (runs/demo: `make demo` first).
Writes experiments/peers/results/quality_{minutes}min.json (with --seed, ..._seed{seed}.json);
with --nmt-updates (nmt_matched stopped at the peers' update counts instead of the clock),
results/quality_equal_updates.json. Without --seed each toolkit keeps its configuration's seed:
the peers' 42, nmt's recipe's 1.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import time
from pathlib import Path

from experiments.shared.runs import (ROOT, bleu_and_chrf, nmt_command, on_the_demos_data, run_facts, sets,
                                     test_translation_scores)
from nmt.checkpoint import load_checkpoint
from tools.results import write_json

STUDY = Path(__file__).resolve().parent
RESULTS = STUDY / "results"
RUNS = ROOT / "runs" / "peers_quality"
RECIPE = "recipes/multi30k_en_de.yaml"
# The Makefile's DEMO_SET but its output folder and minutes.
DEMO = ["model.dropout=0.1", "tokenizer.vocab_size=8000", "train.max_tokens=1024", "train.warmup_steps=400",
        "train.cooldown=0.3", "train.valid_every=500", "train.valid_bleu_sentences=300"]
MATCHED = [*DEMO, "train.cooldown=0", "train.valid_every=1000000", "train.keep_last=1"]
PLAIN_BEAM = ("--beam-size", "4", "--set", "decode.length_penalty=1.0", "--set", "decode.patience=1",
              "--set", "decode.no_repeat_ngram_size=0")
RUN_NAMES = ("eole", "nmt_matched", "joeynmt", "nmt_demo")  # peers between nmt's runs: host drift shows


def rounded(scores: dict[str, float]) -> dict[str, float]:
    return {name: round(score, 2) for name, score in scores.items()}


def peer(script: str, minutes: int, seed: int | None = None) -> dict:
    """A peer's run (its script's JSON) with its test scores."""
    seeds = [] if seed is None else [str(seed)]
    done = subprocess.run(["bash", str(STUDY / script), str(minutes), *seeds], capture_output=True, text=True, cwd=ROOT)
    if done.returncode != 0:
        raise SystemExit(f"{script} failed:\n{(done.stdout + done.stderr)[-2000:]}")
    report = json.loads(done.stdout.strip().splitlines()[-1])
    scores = test_translation_scores(Path(report.pop("hypotheses")), "bleu,chrf")
    return report | {"test": rounded({s["name"]: s["score"] for s in scores})}


def nmt_run(name: str, settings: list[str], minutes: int, checkpoint: str) -> dict:
    """nmt trained on the demo's data for `minutes` (or, with train.max_steps among `settings`
    and minutes 0, for those updates), and its test scores."""
    out = on_the_demos_data(RUNS / name)
    start = time.perf_counter()
    subprocess.run([nmt_command(), "train", RECIPE, *sets([f"output_dir={out}", *settings,
                                                           f"train.max_minutes={minutes}"]), "--no-progress"],
                   cwd=ROOT, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seconds = time.perf_counter() - start
    updates = load_checkpoint(out / "checkpoints" / "last.pt")["progress"]["step"]  # the log has every 50th only
    report = {"toolkit": "nmt", "settings": settings, "checkpoint": checkpoint, "updates": updates,
              "train_seconds": round(seconds, 1),
              "logged_target_tokens_per_s": run_facts(out)["target_tokens_per_s"]}
    checkpoint_path = out / "checkpoints" / checkpoint
    report["test"] = rounded(bleu_and_chrf(checkpoint_path, out / "test.recipe.de", RECIPE))
    if name.startswith("nmt_matched"):  # as the peers decode: beam 4, the mean log-probability per token
        report["test_beam4_plain"] = rounded(bleu_and_chrf(checkpoint_path, out / "test.beam4.de", RECIPE, PLAIN_BEAM))
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=int, default=10)
    parser.add_argument("--runs", default=",".join(RUN_NAMES), help=f"comma-separated: {', '.join(RUN_NAMES)}")
    parser.add_argument("--result", default=None, help="the result file's name (default quality_{minutes}min.json)")
    parser.add_argument("--seed", type=int, default=None, help="every toolkit's random seed (default: each "
                        "configuration's own: the peers' 42, nmt's 1)")
    parser.add_argument("--nmt-updates", default=None,
                        help="instead: nmt_matched trained for each of these updates (comma-separated: the peers' "
                             "counts at the minutes), to tell speed from what an update learns")
    args = parser.parse_args()
    if args.nmt_updates:
        results = []
        for updates in map(int, args.nmt_updates.split(",")):
            results.append({"name": f"nmt_matched_{updates}_updates",
                            **nmt_run(f"nmt_matched_{updates}", [*MATCHED, f"train.max_steps={updates}"], 0, "last.pt")})
            print(json.dumps(results[-1]), flush=True)
        write_json(RESULTS / "quality_equal_updates.json", {"threads": 2, "test_set": "test_2016_flickr", "runs": results})
        return
    seeded = [] if args.seed is None else [f"train.seed={args.seed}"]
    runs = {
        "eole": lambda: peer("eole.sh", args.minutes, args.seed),
        "joeynmt": lambda: peer("joeynmt.sh", args.minutes, args.seed),
        "nmt_matched": lambda: nmt_run("nmt_matched", [*MATCHED, *seeded], args.minutes, "last.pt"),
        "nmt_demo": lambda: nmt_run("nmt_demo", [*DEMO, *seeded], args.minutes, "best.pt"),
    }
    results = []
    for name in args.runs.split(","):
        results.append({"name": name, **runs[name]()})
        print(json.dumps(results[-1]), flush=True)
    seed_part = "" if args.seed is None else f"_seed{args.seed}"
    write_json(RESULTS / (args.result or f"quality_{args.minutes}min{seed_part}.json"),
               {"minutes": args.minutes, "threads": 2, "test_set": "test_2016_flickr", "seed": args.seed,
                "runs": results})


if __name__ == "__main__":
    main()
