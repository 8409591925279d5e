"""Parts of the model kept as they are while the rest trains (train.freeze, and train.lora_rank,
which freezes all but LoRA's updates): by group, or by any
prefix of the parameters' names (`nmt info` lists a checkpoint's modules). Frozen parameters get
no gradients, and the optimizer holds only the others. With tied embeddings the target embedding
is the output layer too, so "embeddings" freezes both."""

from __future__ import annotations

from torch import nn

from nmt.errors import NmtError

GROUPS = {
    "embeddings": ("src_embed.", "tgt_embed."),
    # (a side's relative position biases, model.positions: relative, belong to its stack)
    "encoder": ("encoder_layers.", "encoder_norm.", "encoder_position_bias."),
    "decoder": ("decoder_layers.", "decoder_norm.", "decoder_position_bias."),
    "output": ("output_proj.",),  # a separate output layer (model.tie_output: false)
}


def freeze(model: nn.Module, names: list[str]) -> tuple[int, int]:
    """Freeze the parameters `names` select; returns (frozen, all) parameter counts. A name that
    selects nothing is an error naming the groups."""
    parameters = dict(model.named_parameters())
    frozen = set()
    for name in names:
        prefixes = GROUPS.get(name, (name if name.endswith(".") else name + ".",))
        chosen = {key for key in parameters if key.startswith(prefixes) or key == name}
        if not chosen:
            raise NmtError(f"train.freeze: {name!r} names no parameter of this model (groups: "
                           f"{', '.join(GROUPS)}; or a name prefix such as decoder_layers.0)")
        frozen |= chosen
    for key in frozen:
        parameters[key].requires_grad_(False)
    count = sum(parameters[key].numel() for key in frozen)
    return count, sum(p.numel() for p in parameters.values())


def adapt_with_lora(model: nn.Module, cfg) -> tuple[int, int]:
    """train.lora_rank: every parameter frozen but LoRA's updates of the layers in
    train.lora_targets (nmt.model.lora); returns (frozen, all) as `freeze` does."""
    from nmt.model.lora import add_lora

    if not add_lora(model, cfg.lora_rank, cfg.lora_alpha, cfg.lora_targets):
        raise NmtError(f"train.lora_targets {cfg.lora_targets}: no linear layer of this model has these names "
                       "(the attention's are qkv_proj, q_proj, kv_proj, out_proj; the feed-forward's w1, w2)")
    parameters = list(model.parameters())
    frozen = sum(p.numel() for p in parameters if not p.requires_grad)
    return frozen, sum(p.numel() for p in parameters)


def frozen_as_configured(model: nn.Module, cfg) -> tuple[int, int] | None:
    """train.freeze, then train.lora_rank, as a run sets them up; (frozen, all) parameter counts,
    None where every parameter trains."""
    frozen = freeze(model, cfg.freeze) if cfg.freeze else None
    if cfg.lora_rank:
        frozen = adapt_with_lora(model, cfg)
    return frozen
