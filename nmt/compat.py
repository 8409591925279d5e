"""What keeps old recipes and checkpoints meaning what they meant: renamed keys (a note says the
new name), the former noam schedule written as a peak rate, and defaults that changed after a
checkpoint was written. Raw recipe dicts in, raw recipe dicts out, before validation.
(`nmt translate --batch-tokens`, the former name of --max-tokens, is declared with its option.)"""

from __future__ import annotations


# Keys renamed, old -> new: recipes (and checkpoints) that use the old name still load.
RENAMED_KEYS = {"decode.batch_tokens": "decode.max_tokens", "train.best_metric": "train.valid_metric"}


def rename_old_keys(raw: dict) -> list[str]:
    """Move values from renamed keys to their new names (the old name wins: it was set later, by
    `--set`); returns a note for each."""
    notes = []
    for old, new in RENAMED_KEYS.items():
        (old_section, old_key), (new_section, new_key) = old.split("."), new.split(".")
        section = raw.get(old_section)
        if isinstance(section, dict) and old_key in section:
            raw.setdefault(new_section, {})[new_key] = section.pop(old_key)
            notes.append(f"{old} is now called {new} (the old name still works)")
    return notes


def noam_as_peak_rate(raw: dict, default_d_model: int, default_warmup: int) -> list[str]:
    """`lr_schedule: noam` with `lr: f` (the factor in front of d_model^-0.5) is the inverse_sqrt
    schedule with the peak rate f · d_model^-0.5 · warmup_steps^-0.5: rewrite it so (the recipe's
    d_model and warmup_steps, else the defaults given)."""
    train = raw.get("train")
    if not isinstance(train, dict) or train.get("lr_schedule") != "noam":
        return []
    model = raw.get("model") if isinstance(raw.get("model"), dict) else {}
    factor = train.get("lr", 1.0)
    d_model, warmup = model.get("d_model", default_d_model), train.get("warmup_steps", default_warmup)
    if not all(isinstance(v, (int, float)) and v > 0 for v in (factor, d_model, warmup)):
        return []  # left to validation, which names the bad value
    train["lr_schedule"], train["lr"] = "inverse_sqrt", factor * (d_model * warmup) ** -0.5
    return [f"train.lr_schedule: noam with lr {factor} is now written train.lr_schedule: inverse_sqrt, "
            f"train.lr: {train['lr']:.4g} (train.lr is the peak rate under every schedule)"]


def keep_stored_meaning(recipe) -> None:
    """A recipe stored before a key existed meant what nmt did then: GNMT's length penalty
    (decode.length_penalty_form), a ReLU feed-forward (model.activation). Say so, so that its
    model computes and decodes as it did."""
    if not isinstance(recipe, dict):
        return
    decode, model = recipe.get("decode"), recipe.get("model")
    if isinstance(decode, dict) and "length_penalty" in decode and "length_penalty_form" not in decode:
        decode["length_penalty_form"] = "gnmt"
    if isinstance(model, dict) and "d_model" in model and "activation" not in model:
        model["activation"] = "relu"
