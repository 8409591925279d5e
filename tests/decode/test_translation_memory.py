"""Translation memories at translation time (nmt.decode.memory): a line the memory holds gets its
translation there, the others what the model gives them alone, with their warnings and progress
counted as ever."""

from __future__ import annotations

from typer.testing import CliRunner

from nmt.cli import app
from nmt.decode.text.casing import hypothesis_text
from nmt.decode.translate import translate_lines
from tests.conftest import one_line_error


def test_a_line_the_memory_holds_gets_its_translation_the_others_the_models(tmp_path, trained_tiny, translator, cfg):
    memory = tmp_path / "memory.tmx"
    memory.write_text('<tmx version="1.4"><body><tu><tuv xml:lang="en"><seg>A dog runs.</seg></tuv>'
                      '<tuv xml:lang="de"><seg>Ein Hund läuft.</seg></tuv></tu></body></tmx>')
    lines = ["A man sleeps.", "A  dog runs. ", " ".join(["dog"] * 400), "A dog runs"]
    remembering = cfg.model_copy(update={"memory": str(memory)})

    def texts(settings, warnings):
        hyps = translate_lines(translator, lines, settings, warn=warnings.append, first_line=5)
        return [hypothesis_text(translator.tgt_tokenizer, h[0]) for h in hyps]

    plain_warnings, warnings = [], []
    plain = texts(cfg, plain_warnings)
    remembered = texts(remembering, warnings)
    assert remembered[1] == "Ein Hund läuft." != plain[1]  # spaces aside
    assert [remembered[i] for i in (0, 2, 3)] == [plain[i] for i in (0, 2, 3)]  # "A dog runs" is another text
    assert warnings == plain_warnings and warnings[0].startswith("line 7:")  # each line still named by its number
    # the progress of a file: every line counted, the remembered ones too
    from nmt.decode.request import Line
    from nmt.decode.translate import translate

    heard: list[int] = []
    translate(translator, [Line(line) for line in lines], remembering, finished=heard.extend)
    assert sorted(heard) == [0, 1, 2, 3]


def test_a_sentence_the_memory_holds_is_its_translation_inside_a_paragraph(tmp_path, translator, cfg):
    """A paragraph of plain text: the sentence the memory holds takes its translation, the others
    the model's as without the memory; in a paragraph with markup, whose tags need the alignment
    of the whole, the model translates every sentence."""
    memory = tmp_path / "memory.tsv"
    memory.write_text("A dog runs.\tEin Hund läuft.\n")
    remembering = cfg.model_copy(update={"memory": str(memory)})

    def text(line, settings, markup=False):
        return hypothesis_text(translator.tgt_tokenizer, translate_lines(translator, [line], settings, markup=markup)[0][0])

    alone = text("A man sleeps.", cfg)
    assert text("A man sleeps. A dog runs.", remembering) == f"{alone} Ein Hund läuft."
    tagged = "A <b>man</b> sleeps. A dog runs."
    assert text(tagged, remembering, markup=True) == text(tagged, cfg, markup=True)


def test_a_memory_that_cannot_be_read_is_a_one_line_error(tmp_path, trained_tiny):
    (tmp_path / "in.txt").write_text("A dog runs.\n")
    checkpoint = str(trained_tiny.out / "checkpoints" / "last.pt")
    result = CliRunner().invoke(app, ["translate", "-c", checkpoint, "-i", str(tmp_path / "in.txt"), "-o",
                                      str(tmp_path / "out.txt"), "--memory", str(tmp_path / "none.tsv")])
    one_line_error(result, "decode.memory:", "none.tsv: file not found")
    assert not (tmp_path / "out.txt").exists()
