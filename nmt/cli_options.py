"""The options several `nmt` commands share, declared once: their flags, types and help."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

RecipeArg = Annotated[Path, typer.Argument(help="YAML recipe (see recipes/).")]
CHECKPOINTS = "Checkpoint (several: averaged, or see --ensemble), or a directory from `nmt export`."
CheckpointsOpt = Annotated[list[Path], typer.Option("--checkpoint", "-c", help=CHECKPOINTS)]
OptionalCheckpointsOpt = Annotated[Optional[list[Path]], typer.Option("--checkpoint", "-c", help=CHECKPOINTS)]
SetOpt = Annotated[Optional[list[str]], typer.Option(
    "--set", "-s", help="Override one recipe key, e.g. --set train.max_steps=100 (repeatable).")]
SrcLangOpt = Annotated[Optional[str], typer.Option(help="Source language (default: the recipe's data.src_lang).")]
TgtLangOpt = Annotated[Optional[str], typer.Option(
    help="Target language of a multilingual model (default: the recipe's data.tgt_lang).")]
DeviceOpt = Annotated[str, typer.Option(help="cpu, cuda, cuda:1, ...")]
ThreadsOpt = Annotated[int, typer.Option(help="CPU threads; 0 = torch's default.")]
NprocOpt = Annotated[int, typer.Option(
    help="Processes to translate with, each on a share of --threads (or its own GPU); the output is the same.")]
CorpusOpt = Annotated[Optional[str], typer.Option(help=(
    "Or the pairs as a recipe names a split: a path stem, a TSV, CSV or TMX file, or hf:NAME[:CONFIG]:SPLIT."))]
ScoringMaxTokensOpt = Annotated[Optional[int], typer.Option(
    "--max-tokens", help="Tokens per batch, padding included (default: the recipe's decode.max_tokens).")]
ScoringNprocOpt = Annotated[int, typer.Option(
    help="Processes to score with, each on a share of --threads (or its own GPU); the same scores, to float "
                    "rounding.")]
EngineOpt = Annotated[str, typer.Option(help="torch (nmt's own search) or ctranslate2 (checkpoints are converted on the "
                                             "fly; a CTranslate2 export always uses it, an ONNX export onnxruntime).")]
EnsembleOpt = Annotated[bool, typer.Option(help="With several -c: the models together (mean of their next-token "
                                                "probabilities) instead of their averaged weights.")]
ComputeTypeOpt = Annotated[str, typer.Option(help="CTranslate2 only: default (as exported), int8, float32, float16, ...")]
DecodeFromOpt = Annotated[Optional[Path], typer.Option(
    help="Recipe whose decode section replaces the checkpoint's (settings tuned after training).")]
ZeroShotOpt = Annotated[bool, typer.Option(
    help="Allow a direction the model was not trained on (its target language token is known).")]
BeamSizeOpt = Annotated[Optional[int], typer.Option(help="Beam size; 1 = greedy search.")]
OutputOpt = Annotated[str, typer.Option("--output", "-o", help="Output file, or - for stdout.")]
