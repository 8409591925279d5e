"""Translation with an ONNX export (nmt.export.onnx) on onnxruntime, as `nmt translate` translates
with the checkpoint it came from.

    translator = OnnxTranslator("model.onnx.d")
    translator.translate(["A dog runs."])                # the recipe's beam search: ["Ein Hund rennt."]
    translator.translate(["A dog runs."], beam_size=1)   # greedy

`translate` runs nmt's own searches (nmt.decode.search: greedy_search, beam_search) over the graphs
(`OnnxGraphs`), so its every rule (the length penalty, patience, min_len, no_repeat_ngram_size, the
forced language token) is nmt's; the recipe's settings come from onnx_config.json's "search", and
lines are batched by source tokens (its "max_tokens") as `nmt translate` batches them.
`OnnxTranslator.greedy` is greedy search in numpy alone: what an application does with the two
graphs, and the reference for writing it in another language (the most probable token at each
step, PAD and BOS never, up to a·|source| + b tokens).

A multilingual model's direction is chosen when the translator is made (default: the recipe's),
its language tokens looked up in onnx_config.json by the languages they name:

    OnnxTranslator("nllb.onnx.d", src_lang="eng_Latn", tgt_lang="fra_Latn")

As with `nmt translate`, a direction the model was not trained on needs zero_shot=True.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from nmt.config import DecodeConfig
from nmt.data.batching import pack_by_tokens
from nmt.data.languages import listed
from nmt.data.tokenizer import output_text
from nmt.errors import NmtError
from nmt.decode.onnx_graphs import OnnxGraphs, session_threads
from nmt.devices import torch_on_one_thread
from nmt.decode.search import Hypothesis, beam_search, greedy_search
from nmt.export.onnx import CONFIG, STEP_OUTPUTS, read_onnx_config, require_onnx


class OnnxTranslator:
    """An ONNX export's translator for one direction. `settings`: the search's (a DecodeConfig of
    the recipe's beam size, length penalty, patience, min_len, no_repeat_ngram_size and length
    limits, and its max_tokens per batch), which a caller may replace
    (translator.settings.model_copy(update={...}))."""

    def __init__(self, directory: Path, threads: int = 0, src_lang: str | None = None, tgt_lang: str | None = None,
                 zero_shot: bool = False):
        require_onnx()
        import onnxruntime as ort
        import sentencepiece as spm

        directory = Path(directory)
        if not (directory / CONFIG).is_file():
            raise NmtError(f"{directory}: not an ONNX export of nmt (no {CONFIG})")
        self.config = read_onnx_config(directory)
        options = ort.SessionOptions()
        options.intra_op_num_threads = session_threads(threads)
        self.encoder = ort.InferenceSession(str(directory / "encoder.onnx"), options, providers=["CPUExecutionProvider"])
        self.decoder = ort.InferenceSession(str(directory / "decoder.onnx"), options, providers=["CPUExecutionProvider"])
        self.source = spm.SentencePieceProcessor(model_file=str(directory / "source.spm"))
        self.target = spm.SentencePieceProcessor(model_file=str(directory / "target.spm"))
        self.graphs = OnnxGraphs(self.encoder, self.decoder, self.config)
        try:  # the recipe's search (an export older than "search" in its config: greedy)
            # source tokens a batch (an export older than "max_tokens" in its config: the default)
            batching = {"max_tokens": self.config["max_tokens"]} if "max_tokens" in self.config else {}
            self.settings = DecodeConfig(**{"max_len_a": self.config["max_len_a"], "max_len_b": self.config["max_len_b"],
                                            **batching, **self.config.get("search", {"beam_size": 1})})
        except (TypeError, ValueError) as e:
            raise NmtError(f"{directory / CONFIG}: not a readable search ({str(e).splitlines()[0]})") from None
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
        prefix = [*c.get("source_language_prefix", []), _token_of(c["source_language_tokens"], named)] if named else []
        forced = [_token_of(c["target_language_tokens"], tgt)] if kind in ("target", "both") else []
        sources = c["languages"] if c["src_lang"] in c["languages"] else [c["src_lang"]]  # an import's: any of them
        if f"{src}-{tgt}" not in c["directions"] and not (src in sources and tgt in c["languages"]) and not zero_shot:
            raise NmtError(f"{src}-{tgt}: not a direction the model was trained on ({listed(c['directions'])}); "
                           "zero_shot=True translates it anyway")
        return prefix, forced

    def translate(self, lines: list[str], batch_size: int | None = None, beam_size: int | None = None) -> list[str]:
        """Each line's translation, in batches of lines of similar length, by nmt's search over the
        graphs: beam search of `beam_size` (None: the recipe's), greedy for 1. A batch holds up to
        the recipe's decode.max_tokens source tokens, padding included, as `nmt translate` batches
        (`settings.max_tokens`), or `batch_size` lines. An empty line gives an empty line."""
        limit = self.config["max_positions"] - 1 - len(self.prefix)
        encoded = [self.prefix + self.source.encode(line)[: limit - 1] for line in lines]
        outputs = [""] * len(lines)
        rows = np.array(sorted((i for i, ids in enumerate(encoded) if len(ids) > len(self.prefix)),
                               key=lambda i: len(encoded[i])), dtype=np.int64)
        if batch_size is None:
            batches = pack_by_tokens(rows, np.array([len(ids) + 1 for ids in encoded]), self.settings.max_tokens)
        else:
            batches = [rows[start: start + batch_size] for start in range(0, len(rows), batch_size)]
        for batch in batches:
            for i, ids in zip(batch.tolist(), self.search([encoded[i] for i in batch], beam_size)):
                outputs[i] = output_text(self.target, ids)
        return outputs

    def search(self, sources: list[list[int]], beam_size: int | None = None) -> list[list[int]]:
        """Token ids (without EOS) in, the best output's token ids out, one batch: nmt's greedy or
        beam search (nmt.decode.search) over the graphs, with the recipe's settings; the
        direction's forced tokens are its prefix, left out of the output."""
        c = self.config
        beams = beam_size or self.settings.beam_size
        src = torch.full((len(sources), max(len(ids) for ids in sources) + 1), c["pad_id"], dtype=torch.long)
        for row, ids in enumerate(sources):
            src[row, : len(ids) + 1] = torch.tensor(ids + [c["eos_id"]])
        prefixes = [list(self.forced) for _ in sources]
        with torch_on_one_thread():
            found = self._search(src, beams, prefixes)
        return [h.tokens[len(self.forced):] for h in found]

    def _search(self, src: torch.Tensor, beams: int, prefixes: list[list[int]]) -> list[Hypothesis]:
        s = self.settings
        if beams == 1:
            return greedy_search(self.graphs, src, s.max_len_a, s.max_len_b, s.min_len,
                                 no_repeat_ngram_size=s.no_repeat_ngram_size, prefixes=prefixes)
        return [nbest[0] for nbest in beam_search(
            self.graphs, src, beams, s.length_penalty, s.max_len_a, s.max_len_b, min_len=s.min_len,
            no_repeat_ngram_size=s.no_repeat_ngram_size, length_penalty_form=s.length_penalty_form,
            patience=s.patience, prefixes=prefixes)]

    def greedy(self, sources: list[list[int]]) -> list[list[int]]:
        """Greedy search in numpy alone, the reference for an application's own: token ids (without
        EOS) in, output token ids out, one batch; the direction's forced tokens are fed first,
        counted in the length limit as nmt counts them, and left out. (No min_len or n-gram
        blocking: `search` has them.)"""
        c, s = self.config, self.settings
        width = max(len(ids) for ids in sources) + 1
        src = np.full((len(sources), width), c["pad_id"], dtype=np.int64)
        for row, ids in enumerate(sources):
            src[row, : len(ids) + 1] = ids + [c["eos_id"]]
        memory_keys, memory_values, src_bias = self.encoder.run(None, {"src_ids": src})
        forced = self.forced
        limits = np.clip(np.maximum((s.max_len_a * (src != c["pad_id"]).sum(1) + s.max_len_b).astype(np.int64),
                                    len(forced) + 1), 1, c["max_positions"] - 1)
        past = np.zeros((c["decoder_layers"], len(sources), c["heads"], 0, c["head_dim"]), dtype=np.float32)
        past_keys, past_values = past, past.copy()
        alive = np.arange(len(sources))  # the sentence of each row still decoding
        tokens = np.full(len(sources), c["start_token"], dtype=np.int64)
        outputs: list[list[int]] = [[] for _ in sources]
        for step in range(int(limits.max())):
            log_probs, past_keys, past_values = self.decoder.run(list(STEP_OUTPUTS), {
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
