"""Training under torchrun with 2 gloo processes on CPU equals training in 1 process."""

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

from nmt.checkpoint import SHARDS, TRAINING_WEIGHTS, load_checkpoint
from nmt.cli import app
from tests.conftest import TINY, TINY_DATA, prepared_tiny, tiny_recipe

NMT = str(Path(sys.executable).parent / "nmt")
SETTINGS = ["train.update_freq=2", "train.max_tokens=96", "model.dropout=0.0", "train.valid_every=1000",
            "train.valid_bleu_sentences=0", "train.log_every=2", "train.threads=1"]


def train_args(out: Path, steps: int, settings: list[str] = SETTINGS) -> list[str]:
    """`nmt train`'s arguments for the tiny recipe into `out`, `steps` updates."""
    sets = [f"--set=output_dir={out}", f"--set=data.train={TINY_DATA / 'train'}",
            f"--set=data.valid={TINY_DATA / 'valid'}", f"--set=data.test={TINY_DATA / 'valid'}",
            f"--set=train.max_steps={steps}", *[f"--set={s}" for s in settings]]
    return ["train", str(TINY), "--no-progress", *sets]


def run_nmt_train(out: Path, steps: int, nproc: int, in_this_process: bool = False,
                  settings: list[str] = SETTINGS) -> subprocess.CompletedProcess:
    """`nmt train` of the tiny recipe into `out` for `steps` updates on `nproc` processes; one
    process runs inside this one (the same command, without an interpreter's start-up)."""
    args = train_args(out, steps, settings)
    if nproc == 1 or in_this_process:
        result = CliRunner().invoke(app, [*args, f"--nproc={nproc}"])
        return subprocess.CompletedProcess(args, result.exit_code, result.stdout, result.stderr)
    temporary = out.with_name(f"{out.name}.tmp")  # what torchrun leaves in the temporary folder: torchelastic_* was
    temporary.mkdir(exist_ok=True)
    result = subprocess.run([NMT, *args, f"--nproc={nproc}"], capture_output=True, text=True, timeout=300,
                            env=os.environ | {"TMPDIR": str(temporary)})
    assert not list(temporary.glob("torchelastic_*")) and not list(temporary.glob("nmt-torchrun-*"))
    return result


def model_of(out: Path) -> dict:
    return load_checkpoint(out / "checkpoints" / "last.pt")["model"]


def first_moments(out: Path) -> list[torch.Tensor]:
    """Adam's running mean of gradients: unlike the parameters, proportional to the gradients' scale."""
    state = load_checkpoint(out / "checkpoints" / "last.pt")["optimizer"]["state"]
    return [state[i]["exp_avg"] for i in sorted(state)]


def assert_same_parameters(a: dict, b: dict) -> None:
    for name, tensor in a.items():
        assert torch.allclose(tensor, b[name], atol=2e-5, rtol=1e-4), name


@pytest.mark.slow
def test_two_processes_stopped_by_a_signal_reach_the_parameters_of_one_and_resume_in_either_world_size(tmp_path):
    """`nmt train --nproc 2` gets SIGTERM while both processes train: they save one checkpoint and
    exit (130, no traceback, no process left behind). Its parameters, Adam's moments and the logged
    loss are those of one process trained as far; then each run resumes in the other's world size,
    the one-process run on 2 sharded processes (train.parallel fsdp: each holds half the
    parameters, and writes its own shards of the checkpoint), and they still agree, translate
    alike and resume alike, with the weights' average (train.ema_decay) sharded too."""
    one, two = tmp_path / "one", tmp_path / "two"
    prepared_tiny(one, *SETTINGS)
    prepared_tiny(two, *SETTINGS)
    train = subprocess.Popen([NMT, *train_args(two, 100_000), "--nproc=2"], stderr=subprocess.PIPE, text=True)
    seen = []
    for line in train.stderr:
        seen.append(line)
        if line.startswith("step 4:"):  # both processes are training
            break
    workers = [int(pid) for pid in Path(f"/proc/{train.pid}/task/{train.pid}/children").read_text().split()]
    train.send_signal(signal.SIGTERM)
    rest = train.stderr.read()
    assert train.wait(timeout=60) == 130, rest
    assert rest.count("checkpoint saved at step") == 1 and "Traceback" not in rest
    assert len(workers) == 2 and not any(Path(f"/proc/{pid}").exists() for pid in workers)
    double = "".join(seen) + rest
    assert "2 processes × 1 batches" in double
    assert double.count("nmt train") == 1  # only rank 0 speaks
    stopped_at = load_checkpoint(two / "checkpoints" / "last.pt")["progress"]["step"]
    assert stopped_at >= 4

    single = run_nmt_train(one, stopped_at, nproc=1)
    assert single.returncode == 0, single.stderr
    assert_same_parameters(model_of(one), model_of(two))
    for m1, m2 in zip(first_moments(one), first_moments(two)):
        assert torch.allclose(m1, m2, atol=1e-6, rtol=1e-3)
    log_one = [line for line in single.stderr.splitlines() if line.startswith("step 4:")]
    assert log_one[0].split()[3] == seen[-1].split()[3]  # the same logged loss, summed over ranks

    # From here both runs keep the weights' average (train.ema_decay), under FSDP the average of
    # each process's shards. The whole checkpoint, which keeps no average, resumes on 2 sharded
    # processes (train.parallel fsdp: each holds half the parameters) that write their own shards
    # of the checkpoint; those resume in as many processes, each reading only its own shards (the
    # average's beside the weights'), gathering a whole checkpoint; then in one process. Each
    # step goes where the other run goes uninterrupted, in one process.
    averaged = [*SETTINGS, "train.ema_decay=0.5"]
    sharded = run_nmt_train(one, stopped_at + 3, nproc=2,
                            settings=[*averaged, "train.parallel=fsdp", "train.sharded_checkpoints=true"])
    assert sharded.returncode == 0 and f"resumed at step {stopped_at}" in sharded.stderr, sharded.stderr
    assert "keeps no average of the weights" in sharded.stderr  # the average starts from the weights
    index = torch.load(one / "checkpoints" / "last.pt", weights_only=True)  # each process wrote its shards
    assert "model" not in index and "optimizer" not in index
    shards = one / "checkpoints" / index[SHARDS]["folder"]
    assert sorted(p.name for p in shards.iterdir()) == ["rank_000.pt", "rank_001.pt"]
    held = next(line for line in sharded.stderr.splitlines() if line.startswith("sharded (train.parallel fsdp)"))
    part, whole = (int(n.replace(",", "")) for n in held.split("holds ")[1].split(" parameters")[0].split(" of "))
    assert whole == 177_664 and abs(2 * part - whole) <= 64  # each process half (shards of odd rows differ)
    single = run_nmt_train(two, stopped_at + 3, nproc=1, settings=averaged)
    assert single.returncode == 0, single.stderr
    assert_same_averages(one, two)
    assert dev_loss(sharded.stderr) == pytest.approx(dev_loss(single.stderr), abs=2e-3)  # validated on the average
    translations = []  # the sharded run's checkpoint reads as an ordinary one
    for run in (one, two):
        out = tmp_path / f"{run.name}.de"
        result = CliRunner().invoke(app, ["translate", "-c", str(run / "checkpoints" / "last.pt"), "-i",
                                          str(TINY_DATA / "valid.en"), "-o", str(out)])
        assert result.exit_code == 0, result.output
        translations.append(out.read_text(encoding="utf-8"))
    assert translations[0] == translations[1] and translations[0].count("\n") == 8
    resharded = run_nmt_train(one, stopped_at + 5, nproc=2, settings=[*averaged, "train.parallel=fsdp"])
    assert resharded.returncode == 0 and "each process read its own shards" in resharded.stderr, resharded.stderr
    assert "keeps no average" not in resharded.stderr  # read from the shards
    single = run_nmt_train(two, stopped_at + 5, nproc=1, settings=averaged)
    assert single.returncode == 0, single.stderr
    assert_same_averages(one, two)
    assert dev_loss(resharded.stderr) == pytest.approx(dev_loss(single.stderr), abs=2e-3)
    for run in (one, two):
        assert run_nmt_train(run, stopped_at + 7, nproc=1, settings=averaged).returncode == 0
    assert_same_averages(one, two)


def dev_loss(log: str) -> float:
    """The dev loss of a run's last validation ("step N valid: nll 4.747, ppl 115.261 ...")."""
    return float(re.findall(r" valid: nll ([0-9.]+)", log)[-1])


def assert_same_averages(one: Path, two: Path) -> None:
    """The two runs' weights, their averages (train.ema_decay) and Adam's moments agree, and the
    average is not the weights (the runs did average them)."""
    first, second = (load_checkpoint(run / "checkpoints" / "last.pt") for run in (one, two))
    assert_same_parameters(first["model"], second["model"])
    assert first[TRAINING_WEIGHTS].keys() == second[TRAINING_WEIGHTS].keys() and first[TRAINING_WEIGHTS]
    assert_same_parameters(first[TRAINING_WEIGHTS], second[TRAINING_WEIGHTS])
    assert any(not torch.allclose(first["model"][name], weights, atol=1e-4) for name, weights in first[TRAINING_WEIGHTS].items())
    for m1, m2 in zip(first_moments(one), first_moments(two)):
        assert torch.allclose(m1, m2, atol=1e-6, rtol=1e-3)


def test_bad_input_in_the_processes_is_their_one_line_error_and_exit_code_without_traceback(tmp_path):
    out = tmp_path / "run"
    prepared_tiny(out, *SETTINGS)
    # the processes find it reading the prepared data: sentences longer than the model's positions
    result = run_nmt_train(out, 6, nproc=2, settings=[*SETTINGS, "model.max_positions=8"])
    assert result.returncode == 2
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert errors and all("more than model.max_positions (8) holds" in line for line in errors)
    assert "Traceback" not in result.stderr


@pytest.mark.slow
@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs Linux's /dev/full, a device every write to fails")
def test_a_shard_that_does_not_fit_stops_every_process_with_the_same_one_line_error(tmp_path):
    """A write the system refuses in one process only (here the second's shard of a sharded
    checkpoint, on a full disk: a symlink to /dev/full where it is written) stops both processes
    with the same one-line error, instead of leaving the other to fail in its next collective; the
    shard the first process wrote goes too (tests/cli/test_full_disk.py: the same in one process)."""
    out = tmp_path / "run"
    prepared_tiny(out, *SETTINGS)
    shards = out / "checkpoints" / "step_0000002.shards"
    shards.mkdir(parents=True)
    (shards / ".rank_001.pt.tmp").symlink_to("/dev/full")
    result = run_nmt_train(out, 2, nproc=2, settings=[*SETTINGS, "train.parallel=fsdp", "train.sharded_checkpoints=true"])
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert errors == [f"error: {shards / 'rank_001.pt'}: cannot write there (No space left on device); training "
                      "stopped at step 2, and `nmt train` resumes it from the start"] * 2
    assert list((out / "checkpoints").iterdir()) == []


def test_a_step_not_yet_run_is_one_line_before_any_process_starts(tmp_path):
    """Without `nmt tokenizer` or `nmt prepare`, or without the checkpoint to fine-tune from, `nmt
    train --nproc 2` says so once, as one process would, instead of starting processes that each
    say it."""
    unprepared = run_nmt_train(tmp_path / "unprepared", 6, nproc=2, in_this_process=True)
    assert unprepared.returncode == 2
    assert unprepared.stderr.strip().splitlines() == [
        f"error: {tmp_path / 'unprepared' / 'spm.model'}: tokenizer model not found (run `nmt tokenizer` first)"]
    out = tmp_path / "tokenized"
    recipe = tiny_recipe(out, *SETTINGS)
    from nmt.data.tokenizer import train_tokenizer

    train_tokenizer(recipe.data, recipe.tokenizer, recipe.out)
    tokenized = run_nmt_train(out, 6, nproc=2, in_this_process=True)
    assert tokenized.returncode == 2
    assert tokenized.stderr.strip().splitlines() == [f"error: {out / 'data'}: no prepared data (run `nmt prepare` first)"]
    prepared_tiny(out, *SETTINGS)
    orphan = run_nmt_train(out, 6, nproc=2, in_this_process=True,
                           settings=[*SETTINGS, f"train.init_from={tmp_path / 'parent.pt'}"])
    assert orphan.returncode == 2
    assert orphan.stderr.strip().splitlines() == [f"error: {tmp_path / 'parent.pt'}: checkpoint not found"]
    own = out / "checkpoints" / "step_0000004.pt"  # fine-tuning would change its own parent
    itself = run_nmt_train(out, 6, nproc=2, in_this_process=True, settings=[*SETTINGS, f"train.init_from={own}"])
    assert itself.returncode == 2 and itself.stderr.strip().splitlines() == [
        f"error: train.init_from={own} lies in this run's own checkpoints; fine-tune into another output_dir, so that "
        "the parent run is kept as it is"]


def test_k_processes_share_the_recipes_batches_or_say_which_settings_keep_it():
    from nmt.errors import NmtError
    from nmt.train.distributed import batches_per_rank

    assert batches_per_rank(8, 3125, 8) == 1 and batches_per_rank(2, 12500, 2) == 1 and batches_per_rank(4, 100, 2) == 2
    with pytest.raises(NmtError) as e:  # the base recipe on 8 GPUs as written
        batches_per_rank(2, 12500, 8)
    assert "--set train.update_freq=8 --set train.max_tokens=3125" in str(e.value)
    with pytest.raises(NmtError) as e:
        batches_per_rank(4, 6250, 3)
    assert "--set train.update_freq=6 --set train.max_tokens=4167" in str(e.value)


def test_nproc_that_does_not_divide_update_freq_is_a_one_line_error_before_any_process_starts(tmp_path):
    out = tmp_path / "run"
    prepared_tiny(out, *SETTINGS)
    result = run_nmt_train(out, 6, nproc=3, in_this_process=True)  # it stops before torchrun would start
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "error: train.update_freq=2 batches cannot be shared by 3 processes; to keep the recipe's 2 × 96 = 192 "
        "tokens per update on 3 processes, add --set train.update_freq=3 --set train.max_tokens=64"]
