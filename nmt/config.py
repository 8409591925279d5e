"""Recipes: typed sections loaded from YAML (safe_load), with dotted `--set` overrides.

Every section forbids unknown keys, so a mistyped key fails at load time with its path
(`model.d_modle: unknown key`). The resolved recipe is a plain dict inside every checkpoint.
"""

from __future__ import annotations

import re
import sys
import zipfile
from collections.abc import Hashable
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from nmt.compat import noam_as_peak_rate, rename_old_keys
from nmt.errors import NmtError
from nmt.recipe_errors import KeyPlaces, closest_key


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class AugmentConfig(Section):
    """Training pairs rewritten by `nmt prepare`, each with its probability (nmt.data.augment):
    so that a model also sees the forms users type. All 0: the data as it is."""

    uppercase: float = Field(default=0.0, ge=0.0, le=1.0)  # both sides in capitals
    titlecase: float = Field(default=0.0, ge=0.0, le=1.0)  # both sides with every word capitalized
    typos: float = Field(default=0.0, ge=0.0, le=1.0)  # the source with one typo (a character swapped, lost, doubled)
    tags: float = Field(default=0.0, ge=0.0, le=1.0)  # a tag around corresponding words, or between words, on both sides
    verbatim: float = Field(default=0.0, ge=0.0, le=1.0)  # a number, URL, emoji, ... inserted on both sides
    seed: int = 1  # which pairs, and which typos: the same seed, the same data

    @model_validator(mode="after")
    def _one_case_per_pair(self) -> "AugmentConfig":
        if self.uppercase + self.titlecase > 1:
            raise ValueError(f"uppercase + titlecase: {self.uppercase + self.titlecase:g}, more than 1 "
                             "(a pair gets one case or none)")
        return self

    def active(self) -> bool:
        return bool(self.uppercase or self.titlecase or self.typos or self.tags or self.verbatim)

    def inserts(self) -> bool:
        """Whether tags or items are inserted (which needs the corpus's word dictionary)."""
        return bool(self.tags or self.verbatim)


class CorpusConfig(Section):
    """One of several training corpora (`data.train` as a list)."""

    path: str  # a split: path prefix, TSV file, TMX file or hf:... (as data.train)
    src_lang: str | None = None  # default: data.src_lang
    tgt_lang: str | None = None  # default: data.tgt_lang
    weight: float = Field(default=1.0, gt=0.0)  # multiplies the corpus's share of each epoch (see DataConfig)
    tag: str | None = None  # a token put in front of each of its source sentences, e.g. <BT> for back-translation
    augment: AugmentConfig | None = None  # default: data.augment

    @field_validator("tag")
    @classmethod
    def _tag_is_one_token(cls, tag: str | None) -> str | None:
        if tag is not None and (not tag or any(c.isspace() for c in tag) or not (tag.startswith("<") and tag.endswith(">"))):
            raise ValueError(f"a tag is one token in angle brackets, e.g. <BT> (got {tag!r})")
        return tag


def language_token(lang: str) -> str:
    """The token that asks a multilingual model for target language `lang` (Johnson et al. 2017)."""
    return f"<2{lang}>"


class DataConfig(Section):
    """Where the parallel text is. A split is a path stem: `{stem}.{lang}` or `{stem}.{lang}.gz`
    (or a TSV, CSV, TMX or Hugging Face dataset: nmt.data.corpora).

    `train` is one split, or a list of corpora, each with its own languages, weight and tag. An
    epoch draws from corpus c a number of pairs proportional to weight_c · n_c^(1/T) (n_c: its
    pairs after cleaning, T: sampling_temperature), scaled so that the epoch has as many pairs as
    all corpora together: with weights 1 and T = 1 every pair once, as one concatenated corpus;
    weight 2 doubles a corpus's share; T > 1 flattens the shares towards uniform (T = 5 is common
    for many languages). valid and test are read in every direction the corpora hold.
    """

    src_lang: str  # the default direction (translate, test) and the corpora's default languages
    tgt_lang: str
    train: str | list[CorpusConfig]
    valid: str
    test: str | None = None
    sampling_temperature: float = Field(default=1.0, gt=0.0)
    # Language tokens <2xx>, needed with several target languages. source: the target's token in
    # front of every source sentence (Johnson et al. 2017); target: the target's token forced as
    # the output's first token, never scored (decoder side, Wu et al. 2021); both: the source's
    # token in front of the source and the target's forced first in the output, as NLLB-200 and
    # M2M-100 do; none: no language token.
    language_token: Literal["none", "source", "target", "both"] = "none"
    # The source's language token as text in front of the sentence, sentencepiece's word-boundary
    # piece "▁" before it, as MADLAD-400 was trained (`<2de> text` through its tokenizer); set by
    # `nmt import` where the imported model's tokenizer reads its codes so.
    language_token_as_text: bool = False
    # Languages the model has tokens for besides its corpora's (an imported many-to-many model's):
    # any direction between two of them is translated as a trained one.
    languages: list[str] = []
    # Cleaning of the training split (valid and test are never filtered).
    max_tokens_per_sentence: int = Field(default=250, ge=1)  # in subword pieces, per side
    max_length_ratio: float = Field(default=3.0, ge=1.0)  # longer/shorter side, in pieces
    remove_duplicates: bool = True
    # Drop the pairs whose target is the source left untranslated: the same letters once case,
    # digits, punctuation and spaces are set aside (the noise that harms training most: Khayrallah
    # and Koehn 2018; nmt.data.clean).
    remove_copies: bool = True
    # Drop the training pairs whose source sentence is one of valid's or test's (the same
    # characters, spaces aside): the model would be scored on sentences it learned the translation
    # of. Counted either way, and `nmt prepare` warns where there are any.
    remove_eval_overlap: bool = False
    normalize_nfkc: bool = False
    # Read the corpora's escaped lines as the text they stand for: "stone &amp; tile" and the Moses
    # tokenizer's "it &apos;s" (a line with a character reference, every "&" beginning one, no bare
    # "<" or ">"; nmt.data.escapes), as translation reads such input (and escapes the output
    # again). Every split: training, the tokenizer's text, valid and test.
    unescape: bool = True
    # Drop the pairs a side of which a language identifier (py3langid; pip install 'nmt[langid]')
    # finds in another language than its corpus's, with a probability above this (0.5: more
    # likely than all other languages together; nmt.data.language_filter; on `nmt prepare --threads`
    # processes). None = off.
    language_filter: float | None = Field(default=None, ge=0.0, lt=1.0)
    # Subword regularization (Kudo 2018; BPE-dropout, Provilkov et al. 2020): `nmt prepare` also
    # writes `subword_samples` segmentations of the training split sampled with this alpha (BPE:
    # the probability of dropping a merge; unigram: the smoothing exponent), and training epoch e
    # reads sample e mod subword_samples. 0 = off: one deterministic segmentation.
    subword_sampling_alpha: float = Field(default=0.0, ge=0.0, lt=1.0)
    subword_samples: int = Field(default=4, ge=1)
    # Capitals, Title Case and typos written into a share of the training pairs (nmt.data.augment);
    # a corpus of data.train may set its own.
    augment: AugmentConfig = AugmentConfig()
    # Word alignments of the training pairs, for train.guided_alignment (nmt.data.word_alignments):
    # none; dice: prepare's own word dictionary links each pair's words one to one (no aligner to
    # install; each Chinese or Japanese character a word, nmt.data.words.by_rules_alone); or a file
    # of Pharaoh lines ("0-0 1-2 ..."), one per line of a single training corpus, e.g. from eflomal
    # or fast_align on its whitespace words.
    word_alignments: str = "none"

    @model_validator(mode="after")
    def _corpora_agree_with_the_tokens(self) -> "DataConfig":
        if isinstance(self.train, list) and not self.train:
            raise ValueError("train: an empty list of corpora")
        targets = sorted({tgt for _, tgt in self.directions()})
        if len(targets) > 1 and self.language_token == "none":
            raise ValueError(f"several target languages ({', '.join(targets)}) need data.language_token: "
                             "source, target or both")
        if self.languages and self.language_token == "none":
            raise ValueError("data.languages needs data.language_token (source, target or both)")
        if self.language_token_as_text and self.language_token != "source":
            raise ValueError("data.language_token_as_text needs data.language_token: source "
                             f"(not {self.language_token})")
        if self.word_alignments not in ("none", "dice") and any(
                (c.augment or self.augment).inserts() for c in self.corpora()):
            raise ValueError(f"word_alignments {self.word_alignments}: a file's links number the corpus's own words, "
                             "and augment.tags and augment.verbatim insert words; use dice")
        for i, corpus in enumerate(self.corpora()):
            if corpus.tag and corpus.tag.startswith("<2") and corpus.tag != language_token(corpus.tgt_lang):
                raise ValueError(f"train.{i}.tag: {corpus.tag} names another target language than the corpus's "
                                 f"{corpus.src_lang}-{corpus.tgt_lang} (its language token is {language_token(corpus.tgt_lang)})")
        return self

    def corpora(self) -> list[CorpusConfig]:
        """The training corpora, languages filled in (one, weight 1, for a single split)."""
        if isinstance(self.train, str):
            return [CorpusConfig(path=self.train, src_lang=self.src_lang, tgt_lang=self.tgt_lang)]
        return [c.model_copy(update={"src_lang": c.src_lang or self.src_lang, "tgt_lang": c.tgt_lang or self.tgt_lang})
                for c in self.train]

    def directions(self) -> list[tuple[str, str]]:
        """The (source, target) language pairs the corpora hold, in their order."""
        return list(dict.fromkeys((c.src_lang, c.tgt_lang) for c in self.corpora()))

    @property
    def multidirectional(self) -> bool:
        return len(self.directions()) > 1

    def target_languages(self) -> list[str]:
        return sorted({t for _, t in self.directions()} | set(self.languages))

    def source_languages(self) -> list[str]:
        return sorted({s for s, _ in self.directions()} | set(self.languages))

    def control_tokens(self) -> list[str]:
        """Tokens the source tokenizer reserves (never produced from text): language tokens and corpus tags."""
        languages = {"source": self.target_languages(), "both": self.source_languages()}.get(self.language_token, [])
        tokens = [language_token(lang) for lang in languages]
        return list(dict.fromkeys(tokens + [c.tag for c in self.corpora() if c.tag]))

    def target_control_tokens(self) -> list[str]:
        """Tokens the target tokenizer reserves: the languages' tokens forced first in an output."""
        return [language_token(lang) for lang in self.target_languages()] if self.forced_target_tokens else []

    def reserved_tokens(self) -> list[str]:
        """Every control token of either side (a joint tokenizer reserves them all)."""
        return list(dict.fromkeys(self.control_tokens() + self.target_control_tokens()))

    @property
    def forced_target_tokens(self) -> int:
        """How many tokens each output starts with that are given, not predicted (a language token)."""
        return 1 if self.language_token in ("target", "both") else 0


class TokenizerConfig(Section):
    """A sentencepiece model trained on the training text."""

    model_type: Literal["bpe", "unigram"] = "bpe"
    vocab_size: int = Field(default=8000, ge=1)
    joint: bool = True  # one vocabulary for both languages (needed to share embeddings)
    character_coverage: float = Field(default=1.0, gt=0.0, le=1.0)
    input_sentence_size: int = Field(default=2_000_000, ge=0)  # sentences sampled to train on; 0 = all
    num_threads: int = Field(default=2, ge=1)
    seed: int = 1
    # Text the training data lacks: byte_fallback spells a character no piece covers as its UTF-8
    # bytes (256 byte pieces, so an emoji or a rare script survives instead of becoming <unk>);
    # split_digits makes every digit its own piece (numbers are copied digit by digit);
    # user_defined_symbols are pieces that are never split (placeholders such as {0} or %s).
    byte_fallback: bool = False
    split_digits: bool = False
    user_defined_symbols: list[str] = []

    @field_validator("user_defined_symbols")
    @classmethod
    def _symbols_are_single_tokens(cls, symbols: list[str]) -> list[str]:
        for symbol in symbols:
            if not symbol or any(c.isspace() for c in symbol):
                raise ValueError(f"{symbol!r}: a user-defined symbol is one non-empty piece without spaces")
        if len(set(symbols)) != len(symbols):
            raise ValueError("a user-defined symbol is listed twice")
        return symbols


class ModelConfig(Section):
    """The Transformer of "Attention Is All You Need" (base: 6+6 layers, 512, 8 heads, 2048)."""

    encoder_layers: int = Field(default=6, ge=1)
    decoder_layers: int = Field(default=6, ge=1)
    d_model: int = Field(default=512, ge=1)
    heads: int = Field(default=8, ge=1)
    d_ff: int = Field(default=2048, ge=1)
    dropout: float = Field(default=0.1, ge=0.0, lt=1.0)  # sublayer outputs and embeddings+positions (paper, section 5.4)
    attention_dropout: float = Field(default=0.0, ge=0.0, lt=1.0)  # on attention weights
    activation_dropout: float = Field(default=0.0, ge=0.0, lt=1.0)  # inside the feed-forward, after the ReLU
    norm: Literal["post", "pre"] = "post"  # post-LN is the paper's
    # the feed-forward's; the paper's is ReLU (OPUS-MT's swish; gelu_tanh: GELU's tanh form, T5's gelu_new)
    activation: Literal["relu", "swish", "gelu", "gelu_tanh"] = "relu"
    share_embeddings: bool = True  # source, target and output share one matrix (joint vocabulary)
    tie_output: bool = True  # target embedding doubles as the output projection
    max_positions: int = Field(default=1024, ge=2)  # a piece and its EOS at least
    # sinusoidal: the paper's table, from position 0. fairseq: fairseq's (tensor2tensor's)
    # frequencies, 10000^(-i/(D/2 - 1)), from position 2, as NLLB-200 and M2M-100 were trained with
    # (set by `nmt import`).
    # learned: a learned row per position and side (mBART's; set by `nmt import`).
    # relative: T5's bucketed biases in self-attention, nothing added to the embeddings (below).
    positions: Literal["sinusoidal", "fairseq", "learned", "relative"] = "sinusoidal"
    # A LayerNorm on embeddings + positions, before the dropout (mBART's layernorm_embedding).
    embedding_norm: bool = False
    # The encoder layer (0-based) whose self-attention has no residual connection, so that its
    # output no longer carries each token's position through: Liu et al. 2021's remedy for
    # zero-shot translation into the wrong language (a middle layer). None: every layer has one.
    residual_free_encoder_layer: int | None = None
    # The token the decoder starts from: bos (nmt's own <s>), or eos (</s>, as fairseq-trained
    # models such as NLLB-200 and M2M-100 start; set by `nmt import`).
    decoder_start: Literal["bos", "eos"] = "bos"
    # T5's layout (MADLAD-400, set by `nmt import`), each its own key. relative: no position
    # vectors; each self-attention adds a learned bias per head and bucket of the key's distance
    # from the query (T5's buckets: `relative_buckets`, log-spaced up to `relative_max_distance`),
    # one table per side shared by its layers (nmt.model.relative_positions).
    relative_buckets: int = Field(default=32, ge=2)
    relative_max_distance: int = Field(default=128, ge=2)
    norm_type: Literal["layer", "rms"] = "layer"  # rms: RMSNorm (no mean, no bias; eps 1e-6), T5's
    gated_ffn: bool = False  # FFN(x) = (act(x W1) * x W3) W2 (Shazeer 2020's GLU variants; T5 v1.1's)
    bias: bool = True  # biases in the attention and feed-forward projections (T5 has none)
    head_dim: int | None = Field(default=None, ge=1)  # per head; None: d_model / heads (T5's d_kv may differ)
    scale_embeddings: bool = True  # token embeddings times sqrt(d_model) (3.4); T5 does not scale

    @property
    def head_width(self) -> int:
        """Each attention head's width dh: model.head_dim where set, else d_model / heads."""
        return self.head_dim or self.d_model // self.heads

    def t5_layout(self) -> list[str]:
        """The keys set to T5's layout rather than the paper's ("positions: relative", ...): what
        an engine or export must compute besides the paper's Transformer."""
        keys = {"positions": self.positions == "relative", "norm_type": self.norm_type == "rms",
                "gated_ffn": self.gated_ffn, "bias": not self.bias, "activation": self.activation == "gelu_tanh",
                "scale_embeddings": not self.scale_embeddings,
                "head_dim": self.head_dim is not None and self.head_dim * self.heads != self.d_model}
        return [f"{key}: {str(getattr(self, key)).lower()}" for key, set_ in keys.items() if set_]

    @model_validator(mode="after")
    def _heads_divide_d_model(self) -> "ModelConfig":
        if self.head_dim is None and self.d_model % self.heads:
            raise ValueError(f"d_model ({self.d_model}) must be divisible by heads ({self.heads}), or head_dim set")
        if self.positions == "relative" and self.embedding_norm:
            raise ValueError("embedding_norm normalizes embeddings plus positions; positions: relative adds none")
        layer = self.residual_free_encoder_layer
        if layer is not None and not 0 <= layer < self.encoder_layers:
            raise ValueError(f"residual_free_encoder_layer {layer}: the encoder has layers 0 to {self.encoder_layers - 1}")
        return self


# What fixes a model's weights' shapes and what they compute (dropout and the rest may change
# when fine-tuning).
MODEL_SHAPE_KEYS = ("encoder_layers", "decoder_layers", "d_model", "heads", "d_ff", "norm", "activation",
                    "share_embeddings", "tie_output", "max_positions", "positions", "residual_free_encoder_layer",
                    "decoder_start", "embedding_norm", "relative_buckets", "relative_max_distance", "norm_type",
                    "gated_ffn", "bias", "head_dim", "scale_embeddings")


class GuidedAlignmentConfig(Section):
    """Guided alignment (Garg et al., 2019): the first `heads` heads of decoder layer `layer`
    (negative: from the end) trained towards the word alignments of data.word_alignments, by
    `weight` times their cross-entropy per target token added to the loss. The model's alignments
    (markup, --alignments) then come from those heads, also through a CTranslate2 export
    (nmt.model.guided_alignment)."""

    weight: float = Field(0.0, ge=0.0)  # 0 = off; fairseq's alignment_lambda is 0.05, Marian's 0.1
    layer: int = -2  # the penultimate decoder layer, as Garg et al.
    heads: int = Field(1, ge=1)

    @property
    def active(self) -> bool:
        return self.weight > 0


class PlateauConfig(Section):
    """The rate cut by `factor` each time `patience` validations in a row have not improved the dev
    score that picks best.pt (train.selection_metric): JoeyNMT's plateau scheduler, Marian's
    --lr-decay-strategy stalled. Applied on top of lr_schedule, from the next update; counted by
    the same validations as train.patience (set it higher to cut the rate before stopping)."""

    factor: float = Field(1.0, gt=0.0, le=1.0)  # 1 = off; e.g. 0.5 halves the rate at each cut
    patience: int = Field(2, ge=1)  # validations without improvement before each cut


class TrainConfig(Section):
    max_tokens: int = Field(default=4096, ge=1)  # per batch, counting padding, per device
    update_freq: int = Field(default=1, ge=1)  # batches accumulated into one update
    # Forward and backward passes per update and process, each merging consecutive batches of the
    # update (the same loss and gradients): auto = one on CUDA (more only if memory runs out), one
    # per batch on a CPU (nmt.train.micro_batches).
    micro_batches: int | Literal["auto"] = "auto"
    max_steps: int = Field(default=100_000, ge=1)  # updates: a cap even where max_epochs or max_minutes stops first
    max_epochs: int = Field(default=0, ge=0)  # 0 = no limit
    max_minutes: float = Field(default=0, ge=0)  # training wall time (validation included, summed over resumes); 0 = no limit
    # Linear warm-up to the peak rate train.lr over warmup_steps, then (nmt.train.schedule):
    # inverse_sqrt: decay with 1/sqrt(step), the paper's schedule (5.3) and fairseq's inverse_sqrt;
    # constant: the peak (with cooldown, warm-up-stable-decay; with cooldown 1, a linear decay);
    # cosine: half a cosine from the peak to 0 over the training budget (no cooldown).
    # lr: None = the paper's peak, d_model^-0.5 · warmup_steps^-0.5 (7.0e-4 for the base model).
    lr_schedule: Literal["inverse_sqrt", "constant", "cosine"] = "inverse_sqrt"
    lr: float | None = Field(None, gt=0.0)
    warmup_steps: int = Field(default=4000, ge=0)
    # The last `cooldown` fraction of the budget (whichever of max_steps, max_minutes and max_epochs
    # runs out first) takes the rate linearly down to 0: a time-budgeted run ends on a settled
    # model instead of one still taking large steps. 0 = no cool-down (the paper's schedule).
    cooldown: float = Field(0.0, ge=0.0, le=1.0)
    adam_betas: tuple[float, float] = (0.9, 0.98)
    adam_eps: float = Field(default=1e-9, ge=0.0)
    weight_decay: float = Field(default=0.0, ge=0.0)
    label_smoothing: float = Field(default=0.1, ge=0.0, lt=1.0)
    clip_norm: float = Field(default=0.0, ge=0.0)  # 0 = no clipping
    # An exponential moving average of the weights (nmt.train.weight_average; Marian's
    # exponential-smoothing 1e-4 is a decay of 0.9999): validation, best.pt and every checkpoint's
    # weights are the average, which averages over about 1 / (1 - ema_decay) updates. 0 = off.
    ema_decay: float = Field(default=0.0, ge=0.0, lt=1.0)
    lr_plateau: PlateauConfig = PlateauConfig()  # cut the rate when the dev score stalls
    seed: int = 1
    log_every: int = Field(default=100, ge=1)
    valid_every: int = Field(default=1000, ge=1)
    # Dev sentences greedy-decoded at each validation, for BLEU (always, for the log) and for
    # valid_metric's score; 0 = loss only.
    valid_bleu_sentences: int = Field(default=500, ge=0)
    # What picks best.pt: bleu, chrf, chrf++ (sacrebleu's corpus scores), comet (valid_comet_model's system
    # score of the same sentences, nmt.metrics.comet: slow on a CPU, docs/quality.md), or loss (dev nll).
    valid_metric: Literal["bleu", "chrf", "chrf++", "comet", "loss"] = "bleu"
    valid_comet_model: str | None = None  # a local COMET model directory, for valid_metric comet
    patience: int = Field(default=0, ge=0)  # validations without improvement before stopping; 0 = never stop early
    keep_last: int = Field(default=5, ge=0)  # step checkpoints kept besides last.pt and best.pt
    threads: int = Field(default=0, ge=0)  # torch CPU threads; 0 = leave torch's default
    device: str = "auto"  # auto, cpu, cuda, cuda:1, ...
    # bf16/fp16: autocast (fp16 with loss scaling; on CUDA bf16 weights with fp32 masters). auto: bf16 where the device
    # multiplies bf16 natively (a CUDA GPU from Ampere on; a CPU with AVX512-BF16 or AMX, such as
    # AMD Zen 4 or Intel Sapphire Rapids), else fp32 (nmt.model.precision.training_precision)
    precision: Literal["auto", "fp32", "bf16", "fp16"] = "auto"
    tf32: bool = True  # CUDA only: fp32 matmuls on tensor cores (TF32); ignored on a CPU
    # torch.compile (inductor) with dynamic shapes. auto: on CUDA for runs of at least 5,000 updates
    # and no time limit under 10 minutes, eager where compiling fails (said in the log); never on a
    # CPU, where it is slower (nmt.train.compiling).
    compile: bool | Literal["auto"] = "auto"
    # CUDA graphs (torch.compile's mode reduce-overhead) over shape buckets (nmt.data.buckets): the
    # compiled step's kernels replayed in one launch per shape; one CUDA process, with compile on.
    cuda_graphs: bool = False
    # Packing (nmt.data.packing): pairs in a random order laid end to end in rows of pack_width
    # tokens on each side (a multiple of 8, at least the longest pair), max_tokens // pack_width rows
    # per batch, each token attending within its own sentence: far less padding, one batch shape.
    # null: one pair per padded row, batches cut from neighbouring lengths. Under cuda_graphs every
    # pass then has one shape.
    pack_width: int | None = Field(None, ge=8, multiple_of=8)
    # How the training passes compute attention. sdpa: torch's scaled_dot_product_attention
    # (FlashAttention or the memory-efficient kernel on CUDA, in tiles of 64-128 queries and keys);
    # matmul: the scores materialised by two matmuls and a softmax, which inductor fuses; no tile
    # left mostly empty by short sentences (nmt.model.matmul_attention). The same arithmetic within
    # rounding; validation and decoding use sdpa. Packed rows on CUDA keep FlexAttention.
    # varlen (CUDA, bf16 or fp16, no attention dropout): the key-padding masks become
    # FlashAttention's variable-length segments, so the encoder's self-attention and the
    # encoder-decoder attention run FlashAttention instead of the memory-efficient kernel
    # (nmt.model.varlen_attention).
    # auto: matmul on a CPU, where whole updates at the demo's shape on Multi30k were 4 % faster
    # with it, and within 1.5 % either way at other shapes and lengths
    # (bench/results/cpu_settings.json); sdpa on other devices until a GPU has timed both.
    attention: Literal["auto", "sdpa", "matmul", "varlen"] = "auto"
    # How training on a CPU computes the fp32 products of its linear layers and output layer,
    # forward and backward. onednn: through oneDNN where a weight is 256 wide or more on both sides,
    # and the output layer's where it has 64 × 4,096 weights or more (nmt.model.onednn_linear),
    # else as mkl; mkl: F.linear, which torch computes with Intel's MKL.
    # On AMD processors MKL runs at about half of oneDNN's rate: with onednn bench-small's updates
    # took 0.69-0.75 of their time, the demo's 0.92-0.95 and the base model's 0.63-0.68
    # (bench/results/cpu_settings_linear*.json). Not measured on Intel processors, where the two
    # libraries are closer. No effect on other devices, in bf16 or compiled.
    cpu_linear: Literal["onednn", "mkl"] = "onednn"
    # Activation checkpointing: each encoder and decoder layer's activations are recomputed in the
    # backward pass instead of kept (about a third more compute; the layers' activations no longer
    # grow with the layers). The memory estimate at start says what it saves.
    checkpoint_activations: bool = False
    # Several processes (torchrun): ddp keeps a whole copy of the weights, gradients and Adam's
    # moments on each; fsdp (PyTorch's FSDP2) shards them, 1/K on each of K processes, for models
    # that do not fit one device. auto: fsdp on GPUs where the copies would take more than half of
    # one, else ddp (nmt.train.sharding).
    parallel: Literal["auto", "ddp", "fsdp"] = "auto"
    # Under fsdp: each process writes its own shards of the weights and of Adam's state
    # (checkpoints/step_N.shards/) beside a step_N.pt that holds the rest, instead of gathering
    # everything onto the first process; every reader (resume, translate, export, average) joins
    # them again. No effect on an unsharded run.
    sharded_checkpoints: bool = False
    # Parts kept as they are while the rest trains (nmt.train.freezing): embeddings, encoder, decoder,
    # output, or parameter-name prefixes such as decoder_layers.0; e.g. [embeddings, encoder] to adapt
    # only the decoder of a pretrained model.
    freeze: list[str] = []
    # LoRA (nmt.model.lora): rank r > 0 trains a rank-r update of each linear layer named in
    # lora_targets, scaled by lora_alpha / r, everything else frozen; checkpoints' readers get the
    # merged weights. 0 = off.
    lora_rank: int = Field(default=0, ge=0)
    lora_alpha: float = 16.0
    lora_targets: list[str] = ["qkv_proj", "q_proj", "kv_proj", "out_proj"]

    @property
    def lora_scale(self) -> float:
        return self.lora_alpha / self.lora_rank if self.lora_rank else 0.0
    # Fine-tuning: a new run starts from this checkpoint's weights and tokenizer, with a fresh
    # optimizer, schedule and step count. The model shape and vocabulary must be the parent's.
    init_from: str | None = None
    # Continued training on other data: also the parent's optimizer, loss scale and update count,
    # so that the schedule goes on where the parent's was (fairseq's --restore-file without
    # --reset-optimizer and --reset-lr-scheduler); max_steps and max_minutes count from the
    # parent's start. The epochs, the best score and the dropout masks start afresh.
    init_from_continues: bool = False
    # Shrink and fine-tune (Shleifer and Rush, 2020; DistilBERT): the parent's layers (0-based, in
    # order) that this model's encoder / decoder layers start from, where it has fewer than the
    # parent, e.g. [0, 3] for a 4-layer decoder's first and last; null: layer for layer.
    init_encoder_layers: list[int] | None = None
    init_decoder_layers: list[int] | None = None
    guided_alignment: GuidedAlignmentConfig = GuidedAlignmentConfig()

    @property
    def selection_metric(self) -> str:
        """What picks best.pt: valid_metric's translation score when translations are computed
        (valid_bleu_sentences > 0), else dev nll (kept negated in the training state, so that
        larger is better)."""
        return self.valid_metric if self.valid_metric != "loss" and self.valid_bleu_sentences > 0 else "nll"

    @model_validator(mode="after")
    def _comet_needs_its_model(self) -> "TrainConfig":
        if self.valid_metric == "comet" and not self.valid_comet_model:
            raise ValueError("valid_metric comet needs valid_comet_model (a local COMET model directory)")
        return self

    @model_validator(mode="after")
    def _cosine_decays_by_itself(self) -> "TrainConfig":
        if self.lr_schedule == "cosine" and self.cooldown:
            raise ValueError("train.cooldown: the cosine schedule already takes the rate to 0 over the budget; "
                             "set cooldown to 0 (or lr_schedule constant for a cool-down after a constant rate)")
        return self

    @model_validator(mode="after")
    def _fsdp_trains_every_parameter(self) -> "TrainConfig":
        if self.parallel == "fsdp" and (self.freeze or self.lora_rank):
            raise ValueError("parallel fsdp trains every parameter: freeze and lora_rank run under parallel ddp")
        return self

    @model_validator(mode="after")
    def _varlen_attention_runs_flash_attention(self) -> "TrainConfig":
        if self.attention != "varlen":
            return self
        if self.precision == "fp32":
            raise ValueError("train.attention varlen: FlashAttention takes bf16 or fp16; set train.precision")
        if self.pack_width:
            raise ValueError("train.attention varlen segments padded batches; packed rows (train.pack_width) "
                             "attend through their own masks")
        return self

    @field_validator("micro_batches", mode="before")
    @classmethod
    def _passes_or_auto(cls, value: Any) -> Any:
        if value == "auto" or (isinstance(value, int) and not isinstance(value, bool) and value >= 1):
            return value
        raise ValueError("expected a number of passes (1 or more) or auto")

    @field_validator("compile", mode="before")
    @classmethod
    def _compile_choice(cls, value: Any) -> Any:
        if isinstance(value, bool) or value == "auto":
            return value
        if isinstance(value, str) and value.lower() in ("yes", "on", "no", "off"):  # YAML 1.1's booleans
            return value.lower() in ("yes", "on")
        raise ValueError("expected true, false or auto")

    @field_validator("lr")
    @classmethod
    def _lr_is_a_peak_rate(cls, lr: float | None) -> float | None:
        if lr is not None and lr >= 0.1:
            raise ValueError("the peak learning rate must be below 0.1 (a factor in front of d_model^-0.5, "
                             "as noam's lr was, is the peak factor · d_model^-0.5 · warmup_steps^-0.5)")
        return lr


class MbrConfig(Section):
    """Minimum-Bayes-risk decoding (nmt.decode.mbr): among a line's candidates, the output is the
    one that agrees most with all the others by a utility metric (Freitag et al., 2022)."""

    candidates: int = Field(default=0, ge=0)  # 0: off; N: chosen among N candidates
    # sampling: N draws under decode.temperature, top_k, top_p and epsilon (unset: epsilon sampling
    # at 0.02, Freitag et al., 2023); beam: the beam's N best (beam_size at least N).
    source: Literal["sampling", "beam"] = "sampling"
    utility: Literal["chrf", "chrf++", "bleu", "comet"] = "chrf"  # bleu: sacrebleu's sentence BLEU (exp smoothing)
    comet_model: str | None = None  # a COMET model directory (utility comet; nmt.metrics.comet)


class RerankConfig(Section):
    """Reranking the beam's n-best list (nmt.decode.rerank): each candidate's score is its search
    score plus weighted scores of other models; the best goes out. Weights: `nmt rerank-tune`."""

    candidates: int = Field(default=0, ge=0)  # 0: off; N: the beam's N best (beam_size at least N)
    # A checkpoint translating the other way (target -> source): its log-probability of the source
    # given each candidate, per source token ("noisy channel", Yee et al., 2019).
    reverse_model: str | None = None
    reverse_weight: float = 0.0
    qe_model: str | None = None  # a CometKiwi model directory: quality estimation without references
    qe_weight: float = 0.0


class DecodeConfig(Section):
    beam_size: int = Field(default=4, ge=1)  # 1 = greedy
    # alpha: a finished output is ranked by its log-probability / |Y|^alpha (|Y|: its tokens, EOS not
    # counted), as in CTranslate2; 0 = by log-probability. gnmt: / ((5 + |Y|) / 6)^alpha instead.
    # (A negative alpha would reward short outputs beyond their probability: refused, as serve does.)
    length_penalty: float = Field(default=0.6, ge=0.0)
    length_penalty_form: Literal["power", "gnmt"] = "power"
    # Beam search stops once beam_size · patience outputs have ended (Kasai et al., 2022), as in
    # CTranslate2; more patience: a longer search.
    patience: float = Field(default=1.0, ge=1.0)
    max_len_a: float = Field(default=1.5, ge=0.0)  # output length limit = a * source length + b
    max_len_b: int = Field(default=10, ge=0)
    min_len: int = Field(default=0, ge=0)  # outputs have at least this many tokens (EOS not counted)
    max_tokens: int = Field(default=4096, ge=1)  # source tokens per translation batch, padding included (as train.max_tokens)
    nbest: int = Field(default=1, ge=1)
    no_repeat_ngram_size: int = Field(default=0, ge=0)  # > 0: no n-gram of this size appears twice in an output (0 = off)
    # Sampling instead of search (for back-translation, diverse outputs): beam_size is then ignored.
    sampling: bool = False
    temperature: float = Field(default=1.0, gt=0.0)  # for the most probable token alone: beam_size 1
    top_k: int = Field(default=0, ge=0)  # 0 = no top-k truncation
    top_p: float = Field(default=1.0, gt=0.0, le=1.0)  # 1.0 = no nucleus truncation
    # Epsilon sampling (Hewitt et al., 2022): tokens less probable than this are never drawn; 0 = off.
    # Unset: 0.02 for MBR's samples (Freitag et al., 2023; better than plain sampling at every N on
    # Multi30k, docs/quality.md) where the engine has it, off for --sampling.
    epsilon: float | None = Field(default=None, ge=0.0, lt=1.0)
    seed: int = 1
    # auto: bf16 on a GPU that multiplies bf16 natively (Ampere on), else fp32. bf16 on a CPU with
    # AVX512-BF16 or AMX: the large products in bf16, attention in fp32, 0.6-0.9 of the fp32 time, a
    # few lines otherwise than fp32's (nmt.model.precision.inference_precision)
    precision: Literal["auto", "fp32", "bf16", "fp16"] = "auto"
    # The torch engine's decoding steps compiled by torch.compile (nmt.model.compiled_decoding): the
    # same outputs in 0.8-0.9 of the time on a CPU, after about a minute of compiling in each process
    # (13 s once torch's on-disk cache has the graphs). Pays for a server, which compiles before it
    # takes requests, and for long files. CTranslate2 and ONNX exports run compiled kernels anyway.
    compile: bool = False
    # A line of several sentences is translated sentence by sentence and joined again, a sentence
    # longer than the model's positions in parts (nmt.decode.text.paragraphs); false: each line as
    # one input, truncated where it is longer.
    split_sentences: bool = True
    # A line in capitals or Title Case is translated in sentence case, and a line in capitals is
    # answered in capitals; a word in capitals in an ordinary sentence ("an ORANGE hat") is
    # translated in lower case (nmt.decode.text.casing); false: every line as it is.
    normalize_case: bool = True
    # A sentence typed as in a chat ("a dog runs in the park") is given to the model as written ones
    # begin and end, its first letter capitalized and with a full stop, which comes off the output
    # again (nmt.decode.text.fragments). Off by default: measured on Multi30k only, whose recipe
    # turns it on; a corpus of headlines and labels may read otherwise. false: as typed.
    complete_sentences: bool = False
    # A sentence ending in a question or exclamation mark, an ellipsis, a colon or a comma keeps it:
    # where the output ends in a full stop instead, or in a letter, the mark takes its place, as the
    # target language writes it (nmt.decode.text.end_marks). false: the model's own ending.
    end_marks: bool = True
    # Numbers, URLs, e-mail addresses, emoji, codes such as "C-3PO" and placeholders ("%s", "{0}")
    # are copied into the output unchanged, placed by word alignment (nmt.decode.text.verbatim), and a list's marker ("- ",
    # "1. ") or indentation is written in front of its line's translation (nmt.decode.text.list_markers); false:
    # the model translates them.
    copy_verbatim: bool = True
    # With copy_verbatim, a quantity (a plain number before a word: "3 people", "50 km") stays in its
    # sentence, so the words around it keep their number ("3 Personen", not "3 Eine Person"), and
    # where the output writes it its own way ("drei"), the word aligned to it becomes its digits
    # (nmt.decode.text.quantities); where the engine gives no alignments, or no single word is
    # aligned to it, it is taken out like the rest. false: always taken out.
    quantities_in_place: bool = True
    # With copy_verbatim, text in letters the source vocabulary lacks (without byte fallback: "寿司"
    # or "Добро пожаловать" for a model of Latin script), which the model would read as unknown
    # pieces, is copied as written like the rest, and a warning names its line
    # (nmt.decode.text.verbatim.unreadable_spans). false: the model reads the unknown pieces.
    copy_unreadable: bool = True
    # A name (a capitalized word inside a sentence that the source vocabulary spells in pieces:
    # "Boston", "Vitamin Shoppe") stays in its sentence, and where the output lacks it, the output
    # words aligned to it that the model was unsure of are replaced by it as written
    # (nmt.decode.text.names); needs the engine's alignments, and is off for a source language
    # that capitalizes every noun (German). false: the model's own words.
    copy_names: bool = True
    # Markdown's inline marks in a line that is not markup: **strong**, *emphasis*, ~~struck~~ and
    # [links](url) put back around the output words aligned to theirs, `code` and ![images](src)
    # copied as written (nmt.decode.text.markdown); false: the model reads them as text.
    markdown: bool = True
    # A TrueType font (.ttf) that translated PDF files are drawn in (nmt.decode.pdf_document), for a
    # target script its default lacks (DejaVu where installed, else Vera: Western European letters).
    pdf_font: str | None = None
    # A table (.csv, .tsv) that is not one of a program's texts by language (nmt.decode.csv_table):
    # whether its first row is the columns' names, kept as written, and the columns whose cells are
    # translated, by those names or numbers from 1 ([]: every column).
    table_header: bool = True
    table_columns: list[str | int] = []
    # An aside in parentheses ("Two men (one in a hat) walk.", "(sisters?)") keeps them, so that the
    # model neither drops it nor leaves a parenthesis open: a phrase of 2 to 5 words is translated in
    # its sentence with the parentheses around its words, a single word or a longer aside apart,
    # put back where the words around it went (nmt.decode.text.asides); false: the model reads it in place.
    parentheses: bool = True
    # A quote in quotation marks ("…", “…”, „…“, «…», '…', ‘…’) keeps them: its words stay in their
    # sentence, which the model reads without the marks, and the marks go around the output words
    # aligned to them (nmt.decode.text.quotes); false: the model reads them in place.
    quotes: bool = True
    # Those marks as the target language writes quotes (target: „…“ in German, «…» in French, a
    # quote in a quote ‚…‘; a language without an entry in nmt.decode.text.quotes.TARGET_MARKS as
    # written), or as the source wrote them (source).
    quote_marks: Literal["target", "source"] = "target"
    # A number copied into the output (decode.copy_verbatim) with the target language's decimal mark
    # and thousands separator ("1,000" and "3.5 ft" in English are "1.000" and "3,5 ft" in German),
    # where its reading by the source language's marks is sure (nmt.decode.text.number_marks), or
    # as written (source).
    number_marks: Literal["target", "source"] = "target"
    # A sentence already in the target language (a German line among English ones, for an
    # English-German model) is copied as it is, never given to the model, which would make one up
    # (nmt.decode.text.target_language: py3langid between the direction's two languages; pip
    # install 'nmt[langid]', without which a warning says so once and every sentence is translated).
    # false: every sentence translated.
    keep_target_language: bool = True
    # A lexical shortlist file (`nmt shortlist`; CTranslate2's vocabulary map): each batch's output
    # layer restricted to the target tokens its sources can need (nmt.decode.shortlist); null: all.
    shortlist: str | None = None
    # A glossary file (source term, a tab, its translation: a term a line) whose terms each sentence
    # holding one must translate as given, by the constrained search (nmt.decode.glossary); null: none.
    glossary: str | None = None
    # A translation memory (a TMX or TSV file, or a path stem of two files, in the model's
    # direction): a line it holds exactly is given its translation there (nmt.decode.memory); null: none.
    memory: str | None = None
    mbr: MbrConfig = MbrConfig()
    rerank: RerankConfig = RerankConfig()

    @model_validator(mode="after")
    def _nbest_within_the_beam(self) -> "DecodeConfig":
        chosen_among = self.mbr.candidates or self.rerank.candidates  # the outputs are the candidates
        if chosen_among and self.nbest > chosen_among:
            section = "mbr" if self.mbr.candidates else "rerank"
            raise ValueError(f"nbest ({self.nbest}) must not exceed {section}.candidates ({chosen_among})")
        if not chosen_among and not self.sampling and self.beam_size > 1 and self.nbest > self.beam_size:
            raise ValueError(f"nbest ({self.nbest}) must not exceed beam_size ({self.beam_size})")
        for name, section in (("mbr", self.mbr), ("rerank", self.rerank)):
            beam = name == "rerank" or section.source == "beam"
            if beam and section.candidates > max(self.beam_size, 1):
                raise ValueError(f"{name}.candidates ({section.candidates}) must not exceed beam_size "
                                 f"({self.beam_size}): the candidates are the beam's n-best")
        if self.max_len_a == 0 and self.max_len_b == 0:
            raise ValueError("max_len_a and max_len_b both 0: no output could have a token")
        if self.mbr.candidates and self.rerank.candidates:
            raise ValueError("mbr.candidates and rerank.candidates: choose one way to pick the output")
        if self.mbr.candidates and self.mbr.utility == "comet" and not self.mbr.comet_model:
            raise ValueError("mbr.utility comet needs mbr.comet_model (a COMET model directory)")
        if self.rerank.candidates and not (self.rerank.reverse_model or self.rerank.qe_model):
            raise ValueError("rerank.candidates needs rerank.reverse_model or rerank.qe_model")
        return self


class Recipe(Section):
    output_dir: str
    data: DataConfig
    tokenizer: TokenizerConfig = TokenizerConfig()
    model: ModelConfig = ModelConfig()
    train: TrainConfig = TrainConfig()
    decode: DecodeConfig = DecodeConfig()

    @model_validator(mode="after")
    def _shared_embeddings_need_joint_vocab(self) -> "Recipe":
        if self.model.share_embeddings and not self.tokenizer.joint:
            raise ValueError("model.share_embeddings needs tokenizer.joint: true")
        return self

    @model_validator(mode="after")
    def _packed_rows_need_positions_per_token(self) -> "Recipe":
        if self.train.pack_width and self.model.positions == "relative":
            raise ValueError("train.pack_width: packed rows need each token's own position, and model.positions: "
                             "relative biases every pair of tokens in a row; set pack_width to null")
        return self

    @model_validator(mode="after")
    def _varlen_attention_fits_flash_attention(self) -> "Recipe":
        if self.train.attention != "varlen":
            return self
        model = self.model
        head_width = model.head_width
        if model.attention_dropout > 0:
            raise ValueError("train.attention varlen: FlashAttention's variable-length kernel takes no dropout; "
                             "set model.attention_dropout to 0 or train.attention to sdpa")
        if model.positions == "relative":
            raise ValueError("train.attention varlen: model.positions relative adds a bias to the scores, "
                             "which FlashAttention does not take")
        if head_width % 8 or head_width > 256:
            raise ValueError(f"train.attention varlen: FlashAttention takes heads of a multiple of 8 up to 256 "
                             f"wide, not {head_width}")
        return self

    @model_validator(mode="after")
    def _one_parent_layer_per_layer(self) -> "Recipe":
        for side in ("encoder", "decoder"):
            picked, layers = getattr(self.train, f"init_{side}_layers"), getattr(self.model, f"{side}_layers")
            if picked is None:
                continue
            if not self.train.init_from:
                raise ValueError(f"train.init_{side}_layers needs train.init_from: the parent whose layers they are")
            if len(picked) != layers or len(set(picked)) != layers or min(picked, default=0) < 0:
                raise ValueError(f"train.init_{side}_layers {picked}: {layers} different parent layers (0-based), "
                                 f"one for each of model.{side}_layers")
        return self

    @model_validator(mode="after")
    def _guided_alignment_has_what_it_needs(self) -> "Recipe":
        guided, layers = self.train.guided_alignment, self.model.decoder_layers
        if not guided.active:
            return self
        if self.data.word_alignments == "none":
            raise ValueError("train.guided_alignment needs data.word_alignments: dice, or a file of Pharaoh lines")
        if not -layers <= guided.layer < layers:
            raise ValueError(f"train.guided_alignment.layer {guided.layer}: the decoder has {layers} layers "
                             f"(0 to {layers - 1}, or -1 to -{layers} from the end)")
        if guided.heads > self.model.heads:
            raise ValueError(f"train.guided_alignment.heads {guided.heads}: the model has {self.model.heads} heads")
        if isinstance(self.data.train, list) and len(self.data.train) > 1 and self.data.word_alignments != "dice":
            raise ValueError("data.word_alignments: a file aligns one training corpus; with several, use dice")
        return self

    @property
    def out(self) -> Path:
        return Path(self.output_dir)


def section_of(raw: dict, key: str, label: str) -> tuple[dict, str]:
    """The section of a raw recipe dict that holds dotted `key` (sections created where missing),
    and the key's last part; `label` names the setting in the error where a part is not a section."""
    *parents, leaf = key.split(".")
    node = raw
    for i, part in enumerate(parents):
        child = node.setdefault(part, {})
        if not isinstance(child, dict):
            raise NmtError(f"{label}: {'.'.join(parents[: i + 1])} is not a section")
        node = child
    return node, leaf


def apply_override(raw: dict, assignment: str) -> None:
    """Set `section.key=value` in a raw recipe dict; the value is parsed as YAML (so 100 is an int)."""
    key, sep, value = assignment.partition("=")
    if not sep or not key:
        raise NmtError(f"override '{assignment}': expected KEY=VALUE, e.g. train.max_steps=100")
    node, leaf = section_of(raw, key.strip(), f"override '{assignment}'")
    try:
        node[leaf] = yaml.load(value, Loader=_RecipeLoader) if value.strip() else None  # a SafeLoader
    except yaml.YAMLError as e:
        raise NmtError(f"override '{assignment}': the value is not valid YAML: {getattr(e, 'problem', None) or e}") from None


def _describe(error: dict) -> str:
    where = ".".join(str(p) for p in error["loc"]) or "recipe"
    if error["type"] == "extra_forbidden":
        near = closest_key(Recipe, tuple(error["loc"]))
        return f"{where}: unknown key" + (f" (did you mean {near}?)" if near else "")
    if error["type"] == "missing":
        return f"{where}: missing required key"
    got = error.get("input")
    shown = "" if isinstance(got, dict) else f" (got {got!r})"  # a whole section: its check names the keys
    message = error["msg"].removeprefix("Value error, ")  # pydantic's prefix for a validator's ValueError
    return f"{where}: {message}{shown}"


def recipe_from_dict(raw: dict, source: str = "recipe", say=None, places: KeyPlaces | None = None) -> Recipe:
    """A validated recipe from its dict; `say(note)` hears of renamed keys (a checkpoint's recipe
    is read silently). An error names `source`, or, with `places`, each key's line or --set."""
    for note in rename_old_keys(raw) + noam_as_peak_rate(raw, ModelConfig().d_model, TrainConfig().warmup_steps):
        if say:
            say(f"note: {source}: {note}")
    try:
        return Recipe.model_validate(raw)
    except ValidationError as e:
        errors = _one_branch(e.errors(), raw)
        if places is None:
            raise NmtError(f"{source}: " + "; ".join(dict.fromkeys(_describe(err) for err in errors))) from None
        raise NmtError("; ".join(dict.fromkeys(f"{places.of(tuple(err['loc']))}: {_describe(err)}"
                                               for err in errors))) from None


def _one_branch(errors: list[dict], raw: dict) -> list[dict]:
    """data.train is a split or a list of corpora: report only the errors of the form given."""
    train = raw.get("data", {}).get("train") if isinstance(raw.get("data"), dict) else None
    given = "str" if isinstance(train, str) else "list[CorpusConfig]" if isinstance(train, list) else None
    kept = []
    for error in errors:
        loc = list(error["loc"])
        if loc[:2] == ["data", "train"] and len(loc) > 2 and loc[2] in ("str", "list[CorpusConfig]"):
            if given and loc[2] != given:
                continue
            error = error | {"loc": tuple(loc[:2] + loc[3:])}
        kept.append(error)
    return kept


class _RecipeLoader(yaml.SafeLoader):
    """safe_load's loader with two changes. A key given twice in one mapping is an error: YAML
    loaders keep the last silently, so a recipe with two `train:` sections would lose the first's
    keys (keys that a `<<` merge brings in may still be overridden: only the mapping's own keys
    count). And only true and false are booleans, as in YAML 1.2: YAML 1.1 also reads no, yes, on
    and off so, and `tgt_lang: no` (Norwegian) became False."""

    def construct_mapping(self, node, deep=False):
        if isinstance(node, yaml.MappingNode):
            first_line: dict = {}
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                key = self.construct_object(key_node, deep=True)
                if not isinstance(key, Hashable):
                    continue  # SafeLoader's own error follows
                if key in first_line:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"{key} given twice (first on line {first_line[key]}): YAML would keep only the last",
                        key_node.start_mark)
                first_line[key] = key_node.start_mark.line + 1
        return super().construct_mapping(node, deep)


_BOOL = "tag:yaml.org,2002:bool"
_RecipeLoader.yaml_implicit_resolvers = {
    first: [(tag, pattern) for tag, pattern in resolvers if tag != _BOOL]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}
_RecipeLoader.add_implicit_resolver(_BOOL, re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF"))


def load_recipe(path: str | Path, overrides: list[str] | None = None) -> Recipe:
    path = Path(path)
    if path.is_dir():
        raise NmtError(f"{path}: a directory, not a recipe file")
    if not path.is_file():
        raise NmtError(f"{path}: recipe file not found")
    if zipfile.is_zipfile(path):  # what torch.save writes
        raise NmtError(f"{path}: a checkpoint, not a recipe (its run's recipe.yaml, or `nmt info {path}`, "
                       "says how it was trained)")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        line = path.read_bytes()[:e.start].count(b"\n") + 1
        raise NmtError(f"{path}: line {line} is not UTF-8 text (byte {e.start}); a recipe is a YAML file") from None
    try:
        raw = yaml.load(text, Loader=_RecipeLoader)  # a SafeLoader
    except yaml.YAMLError as e:
        mark, context = getattr(e, "problem_mark", None), getattr(e, "context_mark", None)
        line = f" line {mark.line + 1}" if mark else ""
        # where the construct began, when that is another line: a key without its colon is
        # noticed only on the next line
        began = (f" ({e.context} on line {context.line + 1})"
                 if context and getattr(e, "context", None) and (not mark or context.line != mark.line) else "")
        raise NmtError(f"{path}:{line} invalid YAML: {getattr(e, 'problem', e)}{began}") from None
    if not isinstance(raw, dict):
        raise NmtError(f"{path}: a recipe must be a mapping of sections")
    for assignment in overrides or []:
        apply_override(raw, assignment)
    places = KeyPlaces(path, text, overrides or [], _RecipeLoader)
    return recipe_from_dict(raw, str(path), say=lambda note: print(note, file=sys.stderr), places=places)


def changed_keys(before: dict, after: dict) -> list[str]:
    """The keys whose values differ between two recipe dicts (or sections of one), as
    "train.lr 0.001 -> 0.002" (nested keys dotted), in the order of their names."""
    def leaves(section: dict, prefix: str = "") -> dict:
        flat = {}
        for key, value in section.items():
            if isinstance(value, dict):
                flat.update(leaves(value, f"{prefix}{key}."))
            else:
                flat[f"{prefix}{key}"] = value
        return flat

    old, new = leaves(before), leaves(after)
    return [f"{key} {old.get(key)} -> {new.get(key)}" for key in sorted(old.keys() | new.keys())
            if old.get(key) != new.get(key)]


def recipe_to_dict(recipe: Recipe) -> dict[str, Any]:
    return recipe.model_dump(mode="json")


def save_recipe(recipe: Recipe, path: Path) -> None:
    path.write_text(yaml.safe_dump(recipe_to_dict(recipe), sort_keys=False), encoding="utf-8")
