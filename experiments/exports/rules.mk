# experiments/exports: exports of the demo model: CTranslate2 and transformers beside nmt's own decoder (README.md beside this file).
# Included by the top-level Makefile, whose variables and pipeline macro it uses.
.PHONY: bench-export bench-huggingface bench-onnx bench-onnx-large bench-argos

# On the demo model (run `make demo` first): BLEU of its CTranslate2 exports beside nmt's own
# decoder; a 30 s load run of `nmt serve` with each engine; the page at / in headless Chromium.
bench-export: install
	$(BIN)/python -m experiments.exports.export_quality
# The demo model exported to transformers: BLEU and time of generate beside nmt translate.
bench-huggingface: install
	$(BIN)/python -m experiments.exports.huggingface
# The demo model exported to ONNX (float32, int8) on onnxruntime, beside nmt and CTranslate2: BLEU and time, greedy and in beams.
bench-onnx: install
	$(BIN)/python -m experiments.exports.onnx_runtime
# An ONNX export past protobuf's 2 GiB (a random model of 582M parameters; about 21 GB of memory, 5 minutes).
bench-onnx-large: install
	$(BIN)/python -m experiments.exports.onnx_large
# The demo model as an Argos Translate package through the real argostranslate (offline), beside nmt on the same model.
bench-argos: install
	$(BIN)/python -m experiments.exports.argos_package
