import gzip
import json
import re

import numpy as np
import pytest

from nmt.data.batching import collate, epoch_batches, pack_by_tokens
from nmt.data.corpus import read_lines, read_parallel, split_file
from nmt.data import dedup
from nmt.data.prepare import prepare
from nmt.data import shards
from nmt.data.shards import ParallelShards, Shard, ShardWriter
from nmt.special_tokens import BOS, EOS, PAD
from nmt.data.tokenizer import load_processor, tokenizer_paths, train_tokenizer
from nmt.errors import NmtError
from tests.conftest import TINY_DATA as TINY_DATA_DIR, prepared_tiny, tiny_recipe


def _compressed(path):
    """`path` compressed as .gz, .xz and .bz2, beside it."""
    import bz2
    import lzma

    out = []
    for suffix, compress in ((".gz", gzip.compress), (".xz", lzma.compress), (".bz2", bz2.compress)):
        out.append(path.with_name(path.name + suffix))
        out[-1].write_bytes(compress(path.read_bytes()))
    return out


def test_read_lines_handles_bom_crlf_and_compressed_files(tmp_path):
    plain = tmp_path / "a.txt"
    plain.write_bytes("\ufeffeins\r\nzwei\r\n\r\ndrei".encode())
    assert list(read_lines(plain)) == ["eins", "zwei", "", "drei"]
    for packed in _compressed(plain):
        assert list(read_lines(packed)) == ["eins", "zwei", "", "drei"], packed
    (tmp_path / "bad.xz").write_bytes(b"not xz at all")
    with pytest.raises(NmtError, match="bad.xz: cannot read"):
        list(read_lines(tmp_path / "bad.xz"))
    # a split's sides compressed alike
    from nmt.data.corpora import open_corpus

    (tmp_path / "c.en").write_text("a dog\n")
    (tmp_path / "c.de").write_text("ein Hund\n")
    _compressed(tmp_path / "c.en"), _compressed(tmp_path / "c.de")
    (tmp_path / "c.en").unlink(), (tmp_path / "c.de").unlink(), (tmp_path / "c.en.gz").unlink()
    assert list(open_corpus(str(tmp_path / "c"), "en", "de").pairs()) == [("a dog", "ein Hund")]  # .xz, then .gz


@pytest.mark.parametrize("content", [b"", b"\n", b"a", b"a\n", b"a\nb", "\ufeffa\r\nb\r\n\r\n".encode(), b"a\x0cb\nc\xe2\x80\xa8d\n",
                                     b"x" * (1 << 20) + b"\ny", b"x" * ((1 << 20) - 1) + b"\n", b"a\rb\r", b"a\rb",
                                     b"a\rb\n", (b"x" * 999 + b"\r") * 2000],
                         ids=["empty", "newline", "no-newline", "one", "last-unended", "bom-crlf", "other-breaks",
                              "block-edge", "newline-at-block-end", "cr", "cr-last-unended", "cr-in-a-line",
                              "cr-across-blocks"])
def test_count_lines_counts_what_read_lines_yields(tmp_path, content):
    """The count behind `nmt translate`'s bar: raw bytes, 1 MiB at a time, equal to the lines read."""
    from nmt.data.corpus import count_lines

    plain = tmp_path / "a.txt"
    plain.write_bytes(content)
    for path in (plain, *_compressed(plain)):
        assert count_lines(path) == len(list(read_lines(path)))
    with pytest.raises(NmtError, match="missing.txt: file not found"):
        count_lines(tmp_path / "missing.txt")


def test_a_file_whose_lines_end_in_a_carriage_return_alone_is_read_line_by_line(tmp_path):
    """Classic Mac OS and Excel for Mac's "CSV (Macintosh)" end lines in CR alone: read as lines
    (before, the whole file was one line, translated into one). In a file with LFs, a CR inside a
    line stays in it, so that parallel files keep their lines paired."""
    mac = tmp_path / "mac.en"
    mac.write_bytes("A dog runs.\rA cat sleeps.\r\rZwei Männer.\r".encode())
    assert list(read_lines(mac)) == ["A dog runs.", "A cat sleeps.", "", "Zwei Männer."]
    mixed = tmp_path / "mixed.en"
    mixed.write_bytes(b"a\rb\nc\r\n")
    assert list(read_lines(mixed)) == ["a\rb", "c"]


def test_invalid_utf8_names_file_and_line(tmp_path):
    bad = tmp_path / "bad.de"
    bad.write_bytes(b"gut\nauch gut\nschlecht \xff\xfe\n")
    with pytest.raises(NmtError, match=r"bad.de:3: invalid UTF-8"):
        list(read_lines(bad))


def test_a_windows_1252_line_is_said_to_read_so_and_a_damaged_utf8_line_is_not():
    """Excel's "CSV" and Notepad's "ANSI" are Windows-1252: the error shows the line so read, with
    the command that converts the file; a UTF-8 line with one stray byte gets no such reading."""
    from nmt.data.corpus import decode_lines

    with pytest.raises(NmtError, match=r'^x.csv:2: invalid UTF-8 at byte 5 of the line \(in Windows-1252 it reads '
                                       r'"A café.,Ein Café. – “ok”": if so, convert the file with iconv -f cp1252 '
                                       r'-t utf-8\)$'):
        list(decode_lines([b"en,de\r\n", "A café.,Ein Café. – “ok”\r\n".encode("cp1252")], "x.csv"))
    with pytest.raises(NmtError, match=r"^x.en:1: invalid UTF-8 at byte 10 of the line$"):
        list(decode_lines(["café und ".encode() + b"\xff kaputt\n"], "x.en"))


def test_parallel_files_with_different_line_counts(tmp_path):
    (tmp_path / "c.en").write_text("a\nb\nc\n")
    (tmp_path / "c.de").write_text("a\nb\n")
    with pytest.raises(NmtError, match=r"c.en has 3 lines but .*c.de has 2"):
        list(read_parallel(tmp_path / "c.en", tmp_path / "c.de"))
    (tmp_path / "one.en").write_text("a\n")
    with pytest.raises(NmtError, match=r"one.en has 1 line but .*c.de has 2"):
        list(read_parallel(tmp_path / "one.en", tmp_path / "c.de"))
    (tmp_path / "long.en").write_text("a\n" * 2400)
    (tmp_path / "long.de").write_text("a\n" * 2500)
    with pytest.raises(NmtError, match=r"long.en has 2,400 lines but .*long.de has 2,500:"):  # both counts alike
        list(read_parallel(tmp_path / "long.en", tmp_path / "long.de"))
    (tmp_path / "e.en").write_text("")
    (tmp_path / "e.de").write_text("")
    with pytest.raises(NmtError, match="empty file"):
        list(read_parallel(tmp_path / "e.en", tmp_path / "e.de"))


def test_shards_round_trip(tmp_path):
    sentences = [[5, 6, 7], [], [70000, 1], [9]]
    writer = ShardWriter(tmp_path / "x.src", vocab_size=80000)
    writer.add(sentences[:2])
    writer.add(sentences[2:])
    assert writer.close() == 4
    shard = Shard(tmp_path / "x.src")
    assert [shard[i].tolist() for i in range(len(shard))] == sentences
    assert shard.lengths.tolist() == [3, 0, 2, 1]


def test_shards_stream_offsets_in_slices_and_keep_the_npy_layout(tmp_path, monkeypatch):
    monkeypatch.setattr(shards, "_SLICE", 3)  # close() and the reader work across slice boundaries
    rng = np.random.default_rng(0)
    sentences = [rng.integers(0, 8000, size=rng.integers(0, 6)).tolist() for _ in range(11)]
    writer = ShardWriter(tmp_path / "x.tgt", vocab_size=8000)
    for start in range(0, 11, 4):
        writer.add(sentences[start:start + 4])
    assert writer.close() == 11
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.tgt.bin", "x.tgt.idx"]  # no temp files left
    with open(tmp_path / "x.tgt.idx", "rb") as f:  # two plain .npy arrays: offsets, then dtype
        offsets, dtype = np.load(f), np.load(f)
    assert offsets.tolist() == [0, *np.cumsum([len(s) for s in sentences]).tolist()]
    assert dtype.tolist() == ["<u2"]
    shard = Shard(tmp_path / "x.tgt")
    assert [shard[i].tolist() for i in range(len(shard))] == sentences
    assert shard.lengths.tolist() == [len(s) for s in sentences]


def test_an_empty_shard_reads_back_empty(tmp_path):
    writer = ShardWriter(tmp_path / "e.src", vocab_size=8000)
    assert writer.close() == 0
    shard = Shard(tmp_path / "e.src")
    assert len(shard) == 0 and shard.lengths.tolist() == []


def test_token_batches_respect_the_budget_and_cover_every_pair_once():
    sizes = np.array([3, 9, 4, 4, 12, 1, 7, 30])
    order = np.argsort(sizes, kind="stable")
    batches = pack_by_tokens(order, sizes, max_tokens=16)
    assert sorted(np.concatenate(batches).tolist()) == list(range(8))
    for batch in batches:
        assert len(batch) == 1 or sizes[batch].max() * len(batch) <= 16  # 30 > 16 gets its own batch


def test_epochs_are_reproducible_and_differ(tmp_path):
    recipe = prepared_tiny(tmp_path)
    data = ParallelShards(recipe.out / "data", "train")
    first = epoch_batches(data, 256, seed=3, epoch=0)
    assert [b.tolist() for b in first] == [b.tolist() for b in epoch_batches(data, 256, seed=3, epoch=0)]
    assert [b.tolist() for b in first] != [b.tolist() for b in epoch_batches(data, 256, seed=3, epoch=1)]
    assert sorted(np.concatenate(first).tolist()) == list(range(len(data)))


def test_collate_adds_bos_eos_and_padding(tmp_path):
    recipe = prepared_tiny(tmp_path)
    data = ParallelShards(recipe.out / "data", "train")
    batch = collate(data, np.array([0, 1]))
    for row in range(2):
        src, tgt = data.src[row].tolist(), data.tgt[row].tolist()
        assert batch.src[row, : len(src) + 1].tolist() == src + [EOS]
        assert batch.tgt_in[row, : len(tgt) + 1].tolist() == [BOS] + tgt
        assert batch.tgt_out[row, : len(tgt) + 1].tolist() == tgt + [EOS]
        assert (batch.tgt_out[row, len(tgt) + 1:] == PAD).all()
    assert batch.n_tgt_tokens == len(data.tgt[0]) + len(data.tgt[1]) + 2


def test_tokenizer_round_trips_text_and_is_skipped_when_up_to_date(tmp_path):
    recipe = prepared_tiny(tmp_path)
    sp = load_processor(tokenizer_paths(recipe.out, True)[0])
    text = "Ein schwarzer Hund springt über einen Baumstamm."
    assert sp.decode(sp.encode(text)) == text
    assert train_tokenizer(recipe.data, recipe.tokenizer, recipe.out)["skipped"]
    for cut_short in ('{"settings": {"data"', "[1]"):  # a record cut short or edited: the work is done again
        (recipe.out / "tokenizer.json").write_text(cut_short)
        assert not train_tokenizer(recipe.data, recipe.tokenizer, recipe.out)["skipped"]
        assert train_tokenizer(recipe.data, recipe.tokenizer, recipe.out)["skipped"]


def test_a_training_text_edited_since_retrains_the_tokenizer_unless_checkpoints_use_it(tmp_path):
    import shutil

    from nmt.data.tokenizer import describe_tokenizer

    for side in ("en", "de"):
        shutil.copy(TINY_DATA_DIR / f"train.{side}", tmp_path / f"train.{side}")
    recipe = tiny_recipe(tmp_path / "run", f"data.train={tmp_path / 'train'}")
    train = lambda: train_tokenizer(recipe.data, recipe.tokenizer, recipe.out)  # noqa: E731
    assert not train()["skipped"] and train()["skipped"]
    with open(tmp_path / "train.en", "a", encoding="utf-8") as f:
        f.write("Zebras zigzag zestfully.\n")  # pieces the text had none of
    with open(tmp_path / "train.de", "a", encoding="utf-8") as f:
        f.write("Zebras zickzacken zügig.\n")
    retrained = train()
    assert not retrained["skipped"] and train()["skipped"]
    (recipe.out / "checkpoints").mkdir()
    (recipe.out / "checkpoints" / "last.pt").write_bytes(b"")
    before = (recipe.out / "spm.model").read_bytes()
    (tmp_path / "train.en").write_text((TINY_DATA_DIR / "train.en").read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "train.de").write_text((TINY_DATA_DIR / "train.de").read_text(encoding="utf-8"), encoding="utf-8")
    kept = train()
    assert kept["skipped"] and (recipe.out / "spm.model").read_bytes() == before
    assert describe_tokenizer(kept)[0].startswith("tokenizer kept: ")


@pytest.mark.parametrize("chunk", [97, 502, 1004])  # many chunks, two exactly (on disk), one (in memory)
def test_duplicates_found_equal_a_set_in_memory(tmp_path, monkeypatch, chunk):
    monkeypatch.setattr(dedup, "_CHUNK", chunk)  # repeats cross chunk boundaries
    rng = np.random.default_rng(0)
    words = ["a", "b", "c", "ab", "a b", ""]
    pairs = [(words[i], words[j]) for i, j in rng.integers(0, len(words), size=(1000, 2))]
    pairs += [("x", "y"), ("x", "y "), ("x\ty", ""), ("x", "y\t")]  # near-misses and the tab joining the sides
    seen, expected = set(), set()
    for line, pair in enumerate(pairs):
        (expected.add(line) if pair in seen else seen.add(pair))
    found = dedup.find_duplicates(iter(pairs), tmp_path)
    assert {line for line in range(len(pairs)) if line in found} == expected
    assert len(found) == len(expected) == len(pairs) - len(set(pairs)) and len(pairs) not in found
    assert list(tmp_path.iterdir()) == []  # bucket files removed, or never written


def test_duplicates_are_found_reading_the_corpus_a_chunk_at_a_time(tmp_path, monkeypatch):
    """The corpus's text is read as its chunks are hashed, never whole: when a chunk is hashed,
    at most one chunk beyond it has been read (a WMT-sized corpus held whole took 0.4 GB more
    for each million pairs)."""
    monkeypatch.setattr(dedup, "_CHUNK", 10)
    read, ahead = 0, []

    def pairs():
        nonlocal read
        for line in range(100):
            read += 1
            yield str(line % 37), "x"

    hashed = 0
    records = dedup._records

    def counting_records(chunk, first_line):
        nonlocal hashed
        hashed += len(chunk)
        ahead.append(read - hashed)
        return records(chunk, first_line)

    monkeypatch.setattr(dedup, "_records", counting_records)
    found = dedup.find_duplicates(pairs(), tmp_path)
    assert len(found) == 100 - 37 and hashed == 100
    assert max(ahead) <= 10


def test_prepare_cleans_counts_reasons_and_reruns_only_on_change(tmp_path):
    src = ["A dog runs.", "", "A dog runs.", "Two cats sleep.", "word " * 300, "Hi\x07 there", "ok"]
    tgt = ["Ein Hund rennt.", "Leer", "Ein Hund rennt.", "Zwei Katzen schlafen.", "Wort", "Hallo", "ok " * 40]
    for lang, lines in (("en", src), ("de", tgt)):
        (tmp_path / f"c.{lang}").write_text("\n".join(lines) + "\n")
    recipe = tiny_recipe(tmp_path / "out", f"data.train={tmp_path / 'c'}", "data.max_tokens_per_sentence=200",
                         "data.max_length_ratio=3")
    train_tokenizer(recipe.data, recipe.tokenizer, recipe.out)
    report = prepare(recipe.data, recipe.tokenizer, recipe.out)
    train = report["splits"]["train"]
    assert train["read"] == 7 and train["kept"] == 2
    assert train["dropped"] == {"empty side": 1, "duplicate": 1, "too long": 1, "invalid characters": 1,
                                "length ratio": 1}
    assert prepare(recipe.data, recipe.tokenizer, recipe.out)["skipped"]
    (tmp_path / "c.en").write_text("\n".join(src[:-1] + ["okay"]) + "\n")
    assert not prepare(recipe.data, recipe.tokenizer, recipe.out)["skipped"]
    saved = json.loads((recipe.out / "data" / "report.json").read_text())
    assert saved["splits"]["valid"]["kept"] == 8
    (recipe.out / "data" / "report.json").write_text('{"inputs": ')  # cut short: prepared again
    assert not prepare(recipe.data, recipe.tokenizer, recipe.out)["skipped"]


def test_a_target_that_copies_its_source_is_dropped_where_the_languages_differ(tmp_path):
    """data.remove_copies (on by default): a target that is its source untranslated, whatever its
    case, digits, punctuation and spaces, is dropped and counted; numbers alone, a translation that
    keeps a name, and any pair of a corpus in one language are kept."""
    from nmt.data.clean import is_copy

    assert is_copy("A dog runs.", "a dog runs!") and is_copy("Room 12, floor 3", "room 1 2  floor 4")
    assert not is_copy("2010", "2010") and not is_copy("Anna runs.", "Anna rennt.") and not is_copy("Ça va", "Ca va")
    src = ["A dog runs.", "Two cats sleep.", "Kids play in the park.", "2010", "Anna sings."]
    tgt = ["Ein Hund rennt.", "two cats sleep!", "Kids play in the park", "2010", "Anna singt."]
    for lang, lines in (("en", src), ("de", tgt)):
        (tmp_path / f"c.{lang}").write_text("\n".join(lines) + "\n")
    kept = {}
    for name, settings in (("default", []), ("off", ["data.remove_copies=false"]),
                           ("one language", ["data.src_lang=en", "data.tgt_lang=en", f"data.valid={tmp_path / 'c'}",
                                             "data.test=null"])):
        recipe = tiny_recipe(tmp_path / name, f"data.train={tmp_path / 'c'}", "tokenizer.vocab_size=60", *settings)
        if name == "one language":  # an en→en corpus (paraphrases, a copying task): the sources as targets
            (tmp_path / "c.en").write_text("\n".join(src) + "\n")
        train_tokenizer(recipe.data, recipe.tokenizer, recipe.out)
        kept[name] = prepare(recipe.data, recipe.tokenizer, recipe.out)["splits"]["train"]
    assert kept["default"]["kept"] == 3 and kept["default"]["dropped"] == {"target copies source": 2}
    assert kept["off"]["kept"] == 5 and kept["off"]["dropped"] == {}
    assert kept["one language"]["kept"] == 5 and kept["one language"]["dropped"] == {}


def test_training_pairs_whose_source_is_a_valid_or_test_source_are_counted_and_on_request_dropped(tmp_path):
    """A corpus split by hand often repeats dev and test sentences in training: counted and warned
    about (the scores on them flatter the model), and left out with data.remove_eval_overlap; the
    count is of the source as read (before augmentation), normalized as the pairs are."""
    from nmt.data.prepare import describe_preparation

    train_src = ["A dog runs.", "Two cats sleep.", "Kids play in the park.", "A  man sings. ", "Anna swims."]
    train_tgt = ["Ein Hund rennt.", "Zwei Katzen schlafen.", "Kinder spielen im Park.", "Ein Mann singt.", "Anna schwimmt."]
    for name, src, tgt in (("train", train_src, train_tgt), ("dev", ["Two cats sleep.", "A bird flies."],
                                                             ["Zwei Katzen schlafen.", "Ein Vogel fliegt."]),
                           ("test", ["A man sings.", "Kids play in the park"], ["Ein Mann singt.", "Kinder spielen."])):
        for lang, lines in (("en", src), ("de", tgt)):
            (tmp_path / f"{name}.{lang}").write_text("\n".join(lines) + "\n")
    reports = {}
    for name, settings in (("default", []), ("removed", ["data.remove_eval_overlap=true"]),
                           ("augmented", ["data.augment.uppercase=1.0"])):
        recipe = tiny_recipe(tmp_path / name, f"data.train={tmp_path / 'train'}", f"data.valid={tmp_path / 'dev'}",
                             f"data.test={tmp_path / 'test'}", "tokenizer.vocab_size=60", *settings)
        train_tokenizer(recipe.data, recipe.tokenizer, recipe.out)
        reports[name] = prepare(recipe.data, recipe.tokenizer, recipe.out)
    # "Two cats sleep." (dev) and "A  man sings. " (test, once its spaces are normalized); the test's
    # "Kids play in the park" lacks the full stop: not the same sentence
    default, removed = reports["default"]["splits"]["train"], reports["removed"]["splits"]["train"]
    assert default["kept"] == 5 and default["kept_sources_in_valid_or_test"] == 2
    assert removed["kept"] == 3 and removed["dropped"] == {"source in valid or test": 2}
    assert removed["kept_sources_in_valid_or_test"] == 0
    assert reports["augmented"]["splits"]["train"]["kept_sources_in_valid_or_test"] == 2
    [warning] = [line for line in describe_preparation(reports["default"], tmp_path) if "warning" in line]
    assert "2 kept pairs have a source sentence of valid or test" in warning and "data.remove_eval_overlap" in warning
    assert not any("warning" in line for line in describe_preparation(reports["removed"], tmp_path))
    # every training pair dropped: training says so, with prepare's reasons
    from nmt.train.training_data import TrainingData

    recipe = tiny_recipe(tmp_path / "none left", f"data.train={tmp_path / 'dev'}", f"data.valid={tmp_path / 'dev'}",
                         "data.test=null", "tokenizer.vocab_size=40", "data.remove_eval_overlap=true")
    train_tokenizer(recipe.data, recipe.tokenizer, recipe.out)
    prepare(recipe.data, recipe.tokenizer, recipe.out)
    with pytest.raises(NmtError, match=r"data: the training split is empty after cleaning \(dropped: 2 source in valid "
                                       r"or test\)$"):
        TrainingData(recipe)


def test_nmt_prepare_dropped_writes_each_pair_left_out_with_its_line_and_reason(tmp_path):
    """`nmt prepare --dropped FILE`: every training pair the cleaning leaves out, as read (before
    augmentation), by its corpus and line there, for each reason, and the counts the report gives;
    prepared again where up to date; never over a corpus file."""
    from typer.testing import CliRunner

    from nmt.cli import app
    from tests.conftest import TINY, one_line_error

    runner = CliRunner()
    src = ["A dog runs.", "", "A dog runs.", "Two cats sleep.", "word " * 300, "Hi\x07 there", "ok", "Kids play."]
    tgt = ["Ein Hund rennt.", "Leer", "Ein Hund rennt.", "Zwei Katzen schlafen.", "Wort", "Hallo", "ok " * 40, "kids play!"]
    for lang, lines in (("en", src), ("de", tgt)):
        (tmp_path / f"c.{lang}").write_text("\n".join(lines) + "\n")
    recipe = [str(TINY), "--set", f"output_dir={tmp_path / 'out'}", "--set", f"data.train={tmp_path / 'c'}",
              "--set", f"data.valid={TINY_DATA_DIR / 'valid'}", "--set", "data.test=null", "--set", "tokenizer.vocab_size=60",
              "--set", "data.max_tokens_per_sentence=200", "--set", "data.augment.uppercase=1"]
    assert runner.invoke(app, ["tokenizer", *recipe]).exit_code == 0
    for attempt in range(2):  # the second time up to date: prepared again all the same
        result = runner.invoke(app, ["prepare", *recipe, "--dropped", str(tmp_path / "dropped.jsonl")])
        assert result.exit_code == 0, result.output
        records = [json.loads(line) for line in (tmp_path / "dropped.jsonl").read_text(encoding="utf-8").splitlines()]
        assert [(r["line"], r["reason"]) for r in records] == [
            (2, "empty side"), (3, "duplicate"), (6, "invalid characters"), (8, "target copies source"),
            (5, "too long"), (7, "length ratio")], records
        assert all(r["corpus"] == f"{tmp_path / 'c.en'} + {tmp_path / 'c.de'}" for r in records)
        # each as read (its ends stripped, as prepare reads a line), before augmentation puts it in capitals
        assert all((r["source"], r["target"]) == (src[r["line"] - 1].strip(), tgt[r["line"] - 1].strip()) for r in records)
        report = json.loads((tmp_path / "out" / "data" / "report.json").read_text())["splits"]["train"]
        assert sum(report["dropped"].values()) == len(records) and report["kept"] == 2
    one_line_error(runner.invoke(app, ["prepare", *recipe, "--dropped", str(tmp_path / "c.de")]),
                   "is the corpus file", "write the dropped pairs to another file")
    assert (tmp_path / "c.de").read_text() == "\n".join(tgt) + "\n"


def test_an_interrupted_prepare_leaves_no_unfinished_shard_and_keeps_the_finished_ones(tmp_path, monkeypatch):
    """Ctrl-C while the training pairs are written: the unfinished shards' temporary files go,
    the shards of the run before stay as they were, and the next run prepares again."""
    recipe = prepared_tiny(tmp_path)
    data = recipe.out / "data"
    before = {p.name: p.read_bytes() for p in data.iterdir()}
    (tmp_path / "edited.en").write_text((TINY_DATA_DIR / "train.en").read_text() + "One more line.\n")
    (tmp_path / "edited.de").write_text((TINY_DATA_DIR / "train.de").read_text() + "Noch eine Zeile.\n")
    edited = tiny_recipe(tmp_path, f"data.train={tmp_path / 'edited'}")

    def interrupted(self, sentences):
        raise KeyboardInterrupt

    with monkeypatch.context() as patch:
        patch.setattr(ShardWriter, "add", interrupted)
        with pytest.raises(KeyboardInterrupt):
            prepare(edited.data, edited.tokenizer, edited.out)
    assert {p.name: p.read_bytes() for p in data.iterdir()} == before  # no .tmp file; nothing else changed
    assert prepare(edited.data, edited.tokenizer, edited.out)["splits"]["train"]["read"] == 49


def test_prepare_names_missing_files(tmp_path):
    recipe = prepared_tiny(tmp_path)
    broken = tiny_recipe(tmp_path, f"data.valid={tmp_path / 'nowhere'}")
    with pytest.raises(NmtError, match=r"nowhere.en: file not found"):
        prepare(broken.data, broken.tokenizer, recipe.out)


def test_a_missing_stem_names_the_one_file_split_of_that_name(tmp_path):
    """A recipe naming `corpus/train` where the corpus is `corpus/train.tsv` (or .csv, .tmx,
    compressed or not) is told the file it meant; one naming a TSV file under another name, that
    a TSV split is named .tsv."""
    for name in ("train.tsv", "train.csv.gz", "train.tmx"):
        (tmp_path / name).write_text("a\tb\n")
        with pytest.raises(NmtError, match=rf"train.en: file not found .*; {re.escape(str(tmp_path / name))} is there: "
                                           "name a one-file split with its extension$"):
            split_file(str(tmp_path / "train"), "en")
        (tmp_path / name).unlink()
    with pytest.raises(NmtError, match=r"train.en: file not found \(also tried it with .gz, .xz, .bz2\)$"):
        split_file(str(tmp_path / "train"), "en")
    (tmp_path / "deu.txt").write_text("Go.\tGeh.\tCC-BY 2.0 (France) Attribution: tatoeba.org\n")  # manythings.org's
    with pytest.raises(NmtError, match=r"deu.txt has tab-separated columns: a TSV split is named .tsv"):
        split_file(str(tmp_path / "deu.txt"), "en")


def _tiny_pairs():
    en = (TINY_DATA_DIR / "train.en").read_text().splitlines()
    de = (TINY_DATA_DIR / "train.de").read_text().splitlines()
    return en, de


def _shard_contents(out):
    data = ParallelShards(out / "data", "train")
    return [data.src[i].tolist() for i in range(len(data))], [data.tgt[i].tolist() for i in range(len(data))]


def test_a_tsv_whose_first_column_is_ids_is_refused_before_it_trains(tmp_path):
    """Tatoeba's pairs (id, sentence, id, sentence) named as a TSV split would pair numbers with
    sentences: a one-line error. A number in some lines' first column is text like any."""
    from nmt.data.corpus import ID_LINES, Tsv

    tatoeba = tmp_path / "pairs.tsv"
    tatoeba.write_text("".join(f"{100 + i}\tA dog runs {i}.\t{900 + i}\tEin Hund rennt {i}.\n" for i in range(50)))
    with pytest.raises(NmtError, match=r"pairs.tsv:1: the first column holds numbers, not sentences, .*`cut -f2,4`"):
        list(Tsv(str(tatoeba)).pairs())
    short = tmp_path / "short.tsv"  # fewer lines than ID_LINES, all of them so
    short.write_text("1\tone\n2\ttwo\n")
    with pytest.raises(NmtError, match=r"short.tsv:1: the first column holds numbers, not sentences"):
        list(Tsv(str(short)).pairs())
    mixed = tmp_path / "mixed.tsv"
    lines = ["42\tzweiundvierzig\n"] * (ID_LINES - 1) + ["A dog.\tEin Hund.\n"] * 30
    mixed.write_text("".join(lines))  # a sentence among the first lines: numbers are text there
    assert len(list(Tsv(str(mixed)).pairs())) == len(lines)


def test_tsv_and_hugging_face_corpora_prepare_like_text_files(tmp_path):
    import datasets

    en, de = _tiny_pairs()
    text = prepared_tiny(tmp_path / "text")

    tsv = tmp_path / "train.tsv"
    tsv.write_text("".join(f"{a}\t{b}\n" for a, b in zip(en, de)))
    from_tsv = prepared_tiny(tmp_path / "tsv", f"data.train={tsv}")

    folder = tmp_path / "hf"
    rows = {"translation": [{"en": a, "de": b} for a, b in zip(en, de)]}
    datasets.DatasetDict({"train": datasets.Dataset.from_dict(rows)}).save_to_disk(str(folder))
    from_hf = prepared_tiny(tmp_path / "hfout", f"data.train=hf:{folder}:train")

    expected = _shard_contents(text.out)
    assert _shard_contents(from_tsv.out) == expected
    assert _shard_contents(from_hf.out) == expected
    assert prepare(from_hf.data, from_hf.tokenizer, from_hf.out)["skipped"]
    # each counts its pairs without reading them (the total of nmt prepare's bar)
    from nmt.data.corpora import open_corpus

    for spec in (str(TINY_DATA_DIR / "train"), str(tsv), f"hf:{folder}:train"):
        corpus = open_corpus(spec, "en", "de")
        assert corpus.count_pairs() == len(list(corpus.pairs())) == len(en), spec


def test_bad_tsv_and_hugging_face_specs_are_clear_errors(tmp_path):
    from nmt.data.corpora import open_corpus

    bad = tmp_path / "bad.tsv"
    bad.write_text("one\tein\ntwo without a tab\n")
    with pytest.raises(NmtError, match=r"bad.tsv:2: expected source<TAB>target"):
        list(open_corpus(str(bad), "en", "de").pairs())
    with pytest.raises(NmtError, match="expected hf:NAME"):
        open_corpus("hf:onlyname", "en", "de")
    import datasets

    datasets.Dataset.from_dict({"en": ["a"], "fr": ["b"]}).save_to_disk(str(tmp_path / "ds"))
    with pytest.raises(NmtError, match=r"no 'translation' column nor columns 'en', 'de'"):
        open_corpus(f"hf:{tmp_path / 'ds'}:train", "en", "de")


def test_prepared_data_cut_short_is_a_one_line_error_and_prepared_again(tmp_path):
    """A run's data/ copied in part (a copy that stopped, a file removed by hand): `nmt train` names
    the file, and `nmt prepare`, whose inputs have not changed, prepares the data again instead of
    finding it up to date."""
    from typer.testing import CliRunner

    from nmt.cli import app
    from tests.conftest import TINY, one_line_error

    out = tmp_path / "run"
    recipe = prepared_tiny(out)
    sets = [f"--set=output_dir={out}", f"--set=data.train={TINY_DATA_DIR / 'train'}",
            f"--set=data.valid={TINY_DATA_DIR / 'valid'}", f"--set=data.test={TINY_DATA_DIR / 'valid'}"]
    data = out / "data"
    def shards() -> dict:  # (the report beside them records how long preparing took)
        return {path.name: path.read_bytes() for path in data.iterdir() if path.name != "report.json"}

    whole = shards()
    damage = [("train.src.bin", lambda path: path.write_bytes(path.read_bytes()[:100]),
               f"100 bytes where its index counts {len(whole['train.src.bin']):,}"),
              ("train.tgt.idx", lambda path: path.write_bytes(path.read_bytes()[:200]), "not an index"),
              ("valid.tgt.idx", lambda path: path.unlink(), "missing")]
    for name, cut, reason in damage:
        cut(data / name)
        with pytest.raises(NmtError, match=f"{data / name}: prepared data damaged \\({reason}"):
            ParallelShards(data, name.split(".")[0])
        if name.startswith("train"):  # (the dev set is read once training has started)
            one_line_error(CliRunner().invoke(app, ["train", str(TINY), "--no-progress", *sets]),
                           f"{data / name}: prepared data damaged ({reason}", "run `nmt prepare` again")
        (data / "valid.en-de.src.bin.tmp").write_bytes(bytes(1000))  # what a run killed midway left
        assert prepare(recipe.data, recipe.tokenizer, recipe.out)["skipped"] is False
        assert shards() == whole  # (and the unfinished file gone)
        assert prepare(recipe.data, recipe.tokenizer, recipe.out)["skipped"] is True
