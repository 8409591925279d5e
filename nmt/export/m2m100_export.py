"""A checkpoint imported from an NLLB-200, M2M-100 or mBART-50 directory (or fine-tuned from one)
written back as an `M2M100ForConditionalGeneration` (or `MBartForConditionalGeneration`) directory:
`nmt export --format huggingface`.

The import kept the directory's tokenizer files and config, and which row of the model each nmt
token came from (nmt.export.m2m100_vocabulary; a permutation: the model starts its decoder from
`</s>`, so `<s>` has a row of its own). The export puts every row back in its place, un-permutes
the d_model dimensions as the Pegasus export does (same layer names), and writes the tokenizer
files as they came, with the recipe's direction and decoding (the target's language code forced
first: forced_bos_token_id).
"""

from __future__ import annotations

import json
from pathlib import Path

import torch

from nmt.checkpoint import training_origin
from nmt.config import Recipe
from nmt.errors import NmtError
from nmt.export.directory import write_directory_atomically
from nmt.export.m2m100_vocabulary import unpack_original


def export_m2m100(payload: dict, recipe: Recipe, packed: bytes, checkpoint: Path, out: Path, force: bool,
                  state: dict[str, torch.Tensor], require_transformers) -> dict:
    """Write `out`; `state`: the weights under Pegasus's names (nmt.export.huggingface), rows in nmt's order."""
    transformers = require_transformers()
    files, index, codes = unpack_original(packed)
    if sorted(index) != list(range(len(index))):
        raise NmtError(f"{checkpoint}: its vocabulary does not map one to one onto the imported model's rows")
    if (rows := state["model.encoder.embed_tokens.weight"].size(0)) != len(index):
        raise NmtError(f"{checkpoint}: its vocabulary was extended ({len(index)} -> {rows} tokens, nmt import "
                       "--add-languages/--add-pieces), which the imported tokenizer files cannot say; "
                       "export it with --format ctranslate2")
    to_rows = torch.tensor(index)

    def in_place(rows: torch.Tensor) -> torch.Tensor:  # nmt's row i is the model's row index[i]
        placed = torch.empty_like(rows)
        placed[to_rows] = rows
        return placed

    config = json.loads(files.pop("config.json"))
    mbart = config.get("model_type") == "mbart"
    # M2M-100 has no output bias; mBART's is a buffer of zeros (nmt's forbids PAD and BOS)
    weights = {name: t for name, t in state.items() if name != "final_logits_bias"}
    if mbart:
        weights["final_logits_bias"] = torch.zeros_like(state["final_logits_bias"])
    for name in ("model.encoder.embed_tokens.weight", "model.decoder.embed_tokens.weight", "lm_head.weight"):
        weights[name] = in_place(weights[name])
    weights["model.shared.weight"] = weights["model.encoder.embed_tokens.weight"]
    tied = {"model.encoder.embed_tokens.weight", "model.decoder.embed_tokens.weight", "lm_head.weight"}
    data, decode = recipe.data, recipe.decode
    tokenizer_config = json.loads(files.get("tokenizer_config.json", b"{}"))
    tokenizer_config.update(src_lang=data.src_lang, tgt_lang=data.tgt_lang)  # codes, as both tokenizers take them
    files["tokenizer_config.json"] = json.dumps(tokenizer_config, indent=1, ensure_ascii=False).encode()

    def fill(directory: Path) -> None:
        from safetensors.torch import save_file

        model_config = transformers.AutoConfig.for_model(config["model_type"]).from_dict(config | {
            "dropout": recipe.model.dropout, "attention_dropout": recipe.model.attention_dropout,
            "activation_dropout": recipe.model.activation_dropout})
        model_config.save_pretrained(directory)
        for name, content in files.items():
            (directory / name).write_bytes(content)
        tokenizer = transformers.AutoTokenizer.from_pretrained(directory)  # it says the target code's id
        # nmt's language -> the tokenizer's token (de -> __de__; deu_Latn -> deu_Latn)
        forced = tokenizer.convert_tokens_to_ids(codes.get(data.tgt_lang, data.tgt_lang))
        transformers.GenerationConfig(
            num_beams=max(decode.beam_size, 1), length_penalty=decode.length_penalty,
            no_repeat_ngram_size=decode.no_repeat_ngram_size, max_length=recipe.model.max_positions - 1,
            early_stopping=decode.beam_size > 1 and decode.length_penalty != 0, pad_token_id=model_config.pad_token_id,
            eos_token_id=model_config.eos_token_id, bos_token_id=model_config.bos_token_id,
            decoder_start_token_id=model_config.decoder_start_token_id, forced_bos_token_id=forced,
            forced_eos_token_id=config.get("forced_eos_token_id"),  # mBART's: </s> at the length limit
        ).save_pretrained(directory)
        save_file({k: v.contiguous() for k, v in weights.items() if k not in tied}, str(directory / "model.safetensors"),
                  metadata={"format": "pt"})
        (directory / "README.md").write_text(_card(recipe, checkpoint, payload), encoding="utf-8")

    write_directory_atomically(Path(out), fill, force)
    return {"directory": str(out), "direction": f"{data.src_lang}-{data.tgt_lang}",
            "architecture": "MBartForConditionalGeneration" if mbart else "M2M100ForConditionalGeneration",
            "quantization": "float32",
            "bytes": sum(f.stat().st_size for f in Path(out).iterdir()), "generation_differences": []}


def _card(recipe: Recipe, checkpoint: Path, payload: dict) -> str:
    tuned = f"; fine-tuned from `{recipe.train.init_from}`" if recipe.train.init_from and "progress" in payload else ""
    return multilingual_card(
        recipe, f"({training_origin(payload)}{tuned}) by `nmt export --format huggingface`, as an "
        "`M2M100ForConditionalGeneration` with the tokenizer it was imported with.", checkpoint,
        "A dog runs on the beach.", "  # src_lang/tgt_lang: the recipe's")


def multilingual_card(recipe: Recipe, exported: str, checkpoint: Path, example: str, tokenizer_note: str = "") -> str:
    """The README.md of an exported many-to-many model: `exported` says how (after "Exported from
    CHECKPOINT"), `example` is the source the usage snippet translates."""
    data = recipe.data
    return "\n".join([
        "---", "library_name: transformers", "pipeline_tag: translation", "tags: [nmt, translation]", "---", "",
        f"# {data.src_lang}→{data.tgt_lang} (and {len(data.languages)} languages) exported by nmt", "",
        f"Exported from `{checkpoint}` {exported}", "",
        "```python", "from transformers import AutoModelForSeq2SeqLM, AutoTokenizer",
        "model = AutoModelForSeq2SeqLM.from_pretrained(\"THIS_DIRECTORY\")",
        f"tokenizer = AutoTokenizer.from_pretrained(\"THIS_DIRECTORY\"){tokenizer_note}",
        f"batch = tokenizer([\"{example}\"], return_tensors=\"pt\")",
        "print(tokenizer.batch_decode(model.generate(**batch), skip_special_tokens=True))", "```", "",
        "## Recipe", "", "```json", json.dumps(recipe.model_dump(mode="json"), indent=1), "```", "",
    ])
