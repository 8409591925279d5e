"""Greedy translation with an ONNX export (nmt.export.onnx) on onnxruntime, in numpy: what an
application does with the two graphs, and the check that they translate as nmt does (its greedy
search: the most probable token at each step, PAD and BOS never, up to a·|source| + b tokens).

    translator = OnnxTranslator("model.onnx.d")
    translator.translate(["A dog runs."])   # ["Ein Hund rennt."]

A multilingual model's direction is chosen when the translator is made (default: the recipe's),
its language tokens looked up in onnx_config.json by the languages they name:

    OnnxTranslator("nllb.onnx.d", src_lang="eng_Latn", tgt_lang="fra_Latn")

As with `nmt translate`, a direction the model was not trained on needs zero_shot=True.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from nmt.data.languages import listed
from nmt.data.tokenizer import output_text
from nmt.errors import NmtError
from nmt.export.onnx import CONFIG, require_onnx


class OnnxTranslator:
    def __init__(self, directory: Path, threads: int = 0, src_lang: str | None = None, tgt_lang: str | None = None,
                 zero_shot: bool = False):
        require_onnx()
        import onnxruntime as ort
        import sentencepiece as spm

        directory = Path(directory)
        if not (directory / CONFIG).is_file():
            raise NmtError(f"{directory}: not an ONNX export of nmt (no {CONFIG})")
        try:
            self.config = json.loads((directory / CONFIG).read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise NmtError(f"{directory / CONFIG}: not a readable export description ({e})") from None
        if not isinstance(self.config, dict):
            raise NmtError(f"{directory / CONFIG}: not a readable export description (not a JSON object)")
        options = ort.SessionOptions()
        if threads:
            options.intra_op_num_threads = threads
        self.encoder = ort.InferenceSession(str(directory / "encoder.onnx"), options, providers=["CPUExecutionProvider"])
        self.decoder = ort.InferenceSession(str(directory / "decoder.onnx"), options, providers=["CPUExecutionProvider"])
        self.source = spm.SentencePieceProcessor(model_file=str(directory / "source.spm"))
        self.target = spm.SentencePieceProcessor(model_file=str(directory / "target.spm"))
        self.prefix, self.forced = self._language_tokens(src_lang or self.config["src_lang"],
                                                         tgt_lang or self.config["tgt_lang"], zero_shot)

    def _language_tokens(self, src: str, tgt: str, zero_shot: bool) -> tuple[list[int], list[int]]:
        """(ids in front of each source, ids fed to the decoder after its start token) for src-tgt:
        as `nmt translate` allows, a direction the model was trained on (any two of an imported
        model's languages), another only with `zero_shot`."""
        c = self.config
        kind = c.get("language_token", "none")
        if kind == "none":
            if (src, tgt) != (c["src_lang"], c["tgt_lang"]):
                raise NmtError(f"{src}-{tgt}: the model has no language tokens; it translates {c['src_lang']}-{c['tgt_lang']}")
            return [], []
        named = {"source": tgt, "both": src}.get(kind)
        prefix = [_token_of(c["source_language_tokens"], named)] if named else []
        forced = [_token_of(c["target_language_tokens"], tgt)] if kind in ("target", "both") else []
        sources = c["languages"] if c["src_lang"] in c["languages"] else [c["src_lang"]]  # an import's: any of them
        if f"{src}-{tgt}" not in c["directions"] and not (src in sources and tgt in c["languages"]) and not zero_shot:
            raise NmtError(f"{src}-{tgt}: not a direction the model was trained on ({listed(c['directions'])}); "
                           "zero_shot=True translates it anyway")
        return prefix, forced

    def translate(self, lines: list[str], batch_size: int = 32) -> list[str]:
        """Each line's greedy translation, in batches of lines of similar length; an empty line
        gives an empty line."""
        limit = self.config["max_positions"] - 1 - len(self.prefix)
        encoded = [self.source.encode(line)[: limit - 1] for line in lines]
        outputs = [""] * len(lines)
        rows = sorted((i for i, ids in enumerate(encoded) if ids), key=lambda i: len(encoded[i]))
        for start in range(0, len(rows), batch_size):
            batch = rows[start: start + batch_size]
            for i, ids in zip(batch, self.greedy([self.prefix + encoded[i] for i in batch])):
                outputs[i] = output_text(self.target, ids)
        return outputs

    def greedy(self, sources: list[list[int]]) -> list[list[int]]:
        """Token ids (without EOS) in, output token ids out, one batch; the direction's forced
        tokens are fed first, counted in the length limit as nmt counts them, and left out."""
        c = self.config
        width = max(len(s) for s in sources) + 1
        src = np.full((len(sources), width), c["pad_id"], dtype=np.int64)
        for row, ids in enumerate(sources):
            src[row, : len(ids) + 1] = ids + [c["eos_id"]]
        memory_keys, memory_values, src_bias = self.encoder.run(None, {"src_ids": src})
        forced = self.forced
        limits = np.clip(np.maximum((c["max_len_a"] * (src != c["pad_id"]).sum(1) + c["max_len_b"]).astype(np.int64),
                                    len(forced) + 1), 1, c["max_positions"] - 1)
        past = np.zeros((c["decoder_layers"], len(sources), c["heads"], 0, c["head_dim"]), dtype=np.float32)
        past_keys, past_values = past, past.copy()
        alive = np.arange(len(sources))  # the sentence of each row still decoding
        tokens = np.full(len(sources), c["start_token"], dtype=np.int64)
        outputs: list[list[int]] = [[] for _ in sources]
        for step in range(int(limits.max())):
            log_probs, past_keys, past_values = self.decoder.run(None, {
                "tokens": tokens, "position": np.array([step], dtype=np.int64), "src_bias": src_bias,
                "memory_keys": memory_keys, "memory_values": memory_values,
                "past_keys": past_keys, "past_values": past_values})
            if step < len(forced):
                tokens = np.full(len(alive), forced[step], dtype=np.int64)
            else:
                tokens = log_probs.argmax(-1).astype(np.int64)
            running = np.ones(len(alive), dtype=bool)
            for row, sentence in enumerate(alive):
                if tokens[row] == c["eos_id"]:
                    running[row] = False
                else:
                    outputs[sentence].append(int(tokens[row]))
                    running[row] = len(outputs[sentence]) < limits[sentence]
            if not running.any():
                break
            if not running.all():  # finished sentences leave the batch
                alive, tokens, src_bias = alive[running], tokens[running], src_bias[running]
                memory_keys, memory_values = memory_keys[:, running], memory_values[:, running]
                past_keys, past_values = past_keys[:, running], past_values[:, running]
        return [output[len(forced):] for output in outputs]


def _token_of(tokens: dict[str, int], lang: str) -> int:
    if lang not in tokens:
        raise NmtError(f"{lang}: the model has no language token for it (it has {listed(sorted(tokens))})")
    return tokens[lang]
