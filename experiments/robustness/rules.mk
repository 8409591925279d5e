# experiments/robustness: text as users have it: the demo model on capitals, paragraphs, tags, numbers, typos (README.md beside this file).
# Included by the top-level Makefile, whose variables and pipeline macro it uses.
.PHONY: bench-robustness bench-escaped bench-quotes bench-markup-detection bench-quantities bench-document-lines bench-capitals bench-names bench-target-language bench-fragments bench-markdown bench-end-marks bench-emoticons bench-other-scripts bench-invisible bench-controls bench-subtitles bench-wrapped bench-documents bench-updates bench-asides demo-augmented demo-tagged

# The demo model on text as users have it: paragraphs, upper and title case, inline tags, numbers,
# URLs and emoji (experiments/robustness/results/robustness.json). Tag placement is judged against eflomal (extra "bench").
# With runs/demo_augmented and runs/demo_tagged (make demo-augmented, make demo-tagged), those models
# are measured the same way beside it.
# Tags found without --input-format markup: the tag stress forms through each input format (plain, markup, text).
bench-markup-detection: install
	$(BIN)/python -m experiments.robustness.markup_detection
# Quantities written as digits ("3 people"), with copy_verbatim on and off (results/quantities.json).
bench-quantities: install
	$(BIN)/python -m experiments.robustness.quantities
# List items ("- ", "1. ") and lines without a letter ("...", "---") (results/document_lines.json).
bench-document-lines: install
	$(BIN)/python -m experiments.robustness.document_lines
# Words in capitals in ordinary sentences: emphasis and names (results/capitals.json).
bench-capitals: install
	$(BIN)/python -m experiments.robustness.capitals
# Names copied as written ("Boston", "Vitamin Shoppe"), decode.copy_names on and off (results/names.json).
bench-names: install
	$(BIN)/python -m experiments.robustness.names
# Sentences already in the target language, decode.keep_target_language on and off (results/target_language.json).
bench-target-language: install
	$(BIN)/python -m experiments.robustness.target_language
# Sentences typed as in a chat ("a dog runs"), decode.complete_sentences on and off (results/fragments.json).
bench-fragments: install
	$(BIN)/python -m experiments.robustness.fragments
# Markdown's inline marks (**strong**, [links](url), `code`), decode.markdown on and off (results/markdown.json).
bench-markdown: install
	$(BIN)/python -m experiments.robustness.markdown
# Question and exclamation marks kept, decode.end_marks on and off (results/end_marks.json).
bench-end-marks: install
	$(BIN)/python -m experiments.robustness.end_marks
# Emoticons typed in ASCII (":)"), decode.copy_verbatim on and off (results/emoticons.json).
bench-emoticons: install
	$(BIN)/python -m experiments.robustness.emoticons

# Text in a script the vocabulary lacks, decode.copy_verbatim on and off (results/other_scripts.json).
bench-other-scripts: install
	$(BIN)/python -m experiments.robustness.other_scripts

# Soft hyphens inside words, left out for the model or read as unknown pieces (results/invisible.json).
bench-invisible: install
	$(BIN)/python -m experiments.robustness.invisible

# Vertical tabs between words, each a space for the model or deleted by sentencepiece (results/controls.json).
bench-controls: install
	$(BIN)/python -m experiments.robustness.controls

# Subtitles: each cue translated whole (--input-format srt) or line by line (results/subtitles.json).
bench-subtitles: install
	$(BIN)/python -m experiments.robustness.subtitles

# Text wrapped at 60 columns, each paragraph whole (--input-format wrapped) or line by line (results/wrapped.json).
bench-wrapped: install
	$(BIN)/python -m experiments.robustness.wrapped
# The test set as documents: an HTML gallery page (as HTML or line by line), Word, PowerPoint and OpenDocument files, an e-book, a Markdown list (results/documents.json).
bench-documents: install
	$(BIN)/python -m experiments.robustness.documents
# A site of 100 pages updated after 5 % of its captions changed, against translating it anew (results/updates.json).
bench-updates: install
	$(BIN)/python -m experiments.robustness.updates
# Asides in parentheses, decode.parentheses on and off (results/asides.json).
bench-asides: install
	$(BIN)/python -m experiments.robustness.asides
bench-robustness: install
	$(BIN)/pip install --quiet -e ".[bench]"
	$(BIN)/python -m experiments.robustness.robustness
# The demo trained with 5 % of its pairs in capitals, 5 % in Title Case and 5 % with a typo
# (data.augment), for `make bench-robustness` to compare with the demo.
AUGMENT_SET = --set data.augment.uppercase=0.05 --set data.augment.titlecase=0.05 --set data.augment.typos=0.05
demo-augmented: install
	$(call pipeline,recipes/multi30k_en_de.yaml,runs/demo_augmented,data/multi30k/test_2016_flickr,en,de,$(DEMO_SET) --set output_dir=runs/demo_augmented $(AUGMENT_SET),runs/demo_augmented/checkpoints/best.pt)

# The demo trained with 10 % of its pairs holding a tag and 10 % a verbatim item (a number, URL,
# emoji, ...) on both sides, its tokenizer with byte fallback and the tags as pieces of their own:
# the model that keeps tags and copies items itself, for `make bench-robustness` to compare.
TAGGED_SET = --set data.augment.tags=0.1 --set data.augment.verbatim=0.1 --set tokenizer.byte_fallback=true \
	--set 'tokenizer.user_defined_symbols=[<b>, </b>, <i>, </i>, <em>, </em>, <strong>, </strong>, <u>, </u>, </span>, </a>, <br/>]'
demo-tagged: install
	$(call pipeline,recipes/multi30k_en_de.yaml,runs/demo_tagged,data/multi30k/test_2016_flickr,en,de,$(DEMO_SET) --set output_dir=runs/demo_tagged $(TAGGED_SET),runs/demo_tagged/checkpoints/best.pt)

# Text escaped for a web page (&amp;, &quot;, &#x27;), read as the text it stands for or as typed (results/escaped.json).
bench-escaped: install
	$(BIN)/python -m experiments.robustness.escaped

# Quotation marks around a line or a phrase, decode.quotes on and off (results/quotes.json).
bench-quotes: install
	$(BIN)/python -m experiments.robustness.quotes
