"""Sharded checkpoints (train.sharded_checkpoints under FSDP) as nmt.checkpoint reads them: the
shards of each process joined into the whole weights and optimizer state, tied weights one
tensor again, a missing shard a one-line error, and pruning that keeps what last.pt and best.pt
name. The run under torchrun that writes and resumes them is test_distributed.py's."""

import pytest
import torch

from nmt.checkpoint import SHARDS, average_into, link_checkpoint, load_checkpoint, prune, save_checkpoint, shard_file, shard_folder
from nmt.config import recipe_from_dict
from nmt.errors import NmtError
from nmt.model.transformer import Transformer

RECIPE = {"output_dir": "run", "data": {"src_lang": "en", "tgt_lang": "de", "train": "t", "valid": "v"},
          "model": {"encoder_layers": 1, "decoder_layers": 1, "d_model": 16, "heads": 2, "d_ff": 32}}


def whole_and_sharded(folder, step: int, processes: int = 3):
    """A model's whole checkpoint, and the same written as `processes` shards the way FSDP splits
    tensors (torch.chunk along the first dimension: the last shards smaller, or empty)."""
    torch.manual_seed(step)
    model = Transformer(recipe_from_dict(RECIPE).model, 11, 11)  # 11 rows: uneven shards
    optimizer = torch.optim.Adam(model.parameters())
    model(torch.tensor([[4, 5, 2]]), torch.tensor([[1, 6, 7]])).sum().backward()
    optimizer.step()
    whole = {"model": model.state_dict(), "optimizer": optimizer.state_dict()}

    def part(tensor, rank):
        if tensor.dim() == 0:
            return tensor
        pieces = tensor.chunk(processes, dim=0)
        return pieces[rank].clone() if rank < len(pieces) else tensor[:0].clone()

    path = folder / f"step_{step:07d}.pt"
    for rank in range(processes):
        shared = {}  # one shard per tensor: tied weights stay one tensor in the file
        local = {name: shared.setdefault(t.data_ptr(), part(t, rank)) for name, t in whole["model"].items()}
        state = {i: {k: part(v, rank) for k, v in entry.items()} for i, entry in whole["optimizer"]["state"].items()}
        save_checkpoint({"model": local, "optimizer": {"state": state, "param_groups": whole["optimizer"]["param_groups"]}},
                        shard_file(shard_folder(path), rank))
    save_checkpoint({"recipe": RECIPE, SHARDS: {"folder": shard_folder(path).name, "processes": processes},
                     "progress": {"step": step}, "tokenizer": {}}, path)
    return whole, path


def test_the_shards_are_joined_into_the_whole_checkpoint(tmp_path):
    whole, path = whole_and_sharded(tmp_path, 1)
    read = load_checkpoint(path)
    assert read["model"].keys() == whole["model"].keys()
    for name, tensor in whole["model"].items():
        assert torch.equal(read["model"][name], tensor), name
    assert read["model"]["src_embed.tokens.weight"] is read["model"]["tgt_embed.tokens.weight"]  # tied
    for i, entry in whole["optimizer"]["state"].items():
        for key, value in entry.items():
            assert torch.equal(read["optimizer"]["state"][i][key], value), (i, key)
    assert SHARDS not in read and read["progress"] == {"step": 1}
    for shard in shard_folder(path).iterdir():  # read mapped, joined into copies: nothing read depends on them
        with open(shard, "r+b") as f:
            f.write(b"\0" * shard.stat().st_size)
    assert all(torch.equal(read["model"][name], tensor) for name, tensor in whole["model"].items())
    assert all(torch.equal(read["optimizer"]["state"][i][key], value)
               for i, entry in whole["optimizer"]["state"].items() for key, value in entry.items())
    whole, path = whole_and_sharded(tmp_path, 1)  # written again for the average
    average_into(tmp_path / "whole.pt", [path])  # `nmt average step_N.pt -o whole.pt`: its weights in one file
    written = torch.load(tmp_path / "whole.pt", weights_only=True)
    assert all(torch.equal(written["model"][name], tensor) for name, tensor in whole["model"].items())


def test_a_missing_shard_is_a_one_line_error_naming_it(tmp_path):
    _, path = whole_and_sharded(tmp_path, 1)
    shard_file(shard_folder(path), 2).unlink()
    with pytest.raises(NmtError, match=r"step_0000001.pt: its shard .*rank_002.pt is missing"):
        load_checkpoint(path)


def test_pruning_keeps_the_shards_that_last_and_best_name(tmp_path):
    paths = [whole_and_sharded(tmp_path, step)[1] for step in (1, 2, 3, 4)]
    link_checkpoint(paths[0], tmp_path / "best.pt")
    link_checkpoint(paths[3], tmp_path / "last.pt")
    prune(tmp_path, keep_last=2)
    assert sorted(p.name for p in tmp_path.glob("step_*")) == [
        "step_0000001.shards", "step_0000003.pt", "step_0000003.shards", "step_0000004.pt", "step_0000004.shards"]
    assert load_checkpoint(tmp_path / "best.pt")["progress"] == {"step": 1}  # still whole
    link_checkpoint(paths[3], tmp_path / "best.pt")  # a better model later: step 1's shards go
    prune(tmp_path, keep_last=2)
    assert not shard_folder(paths[0]).exists() and shard_folder(paths[2]).exists()
