from wisp_text.chunking import chunk_text

PARAGRAPH = "This sentence is forty-two characters long. "  # 44 with the space


def test_paragraphs_are_packed_up_to_the_limit() -> None:
    text = "\n\n".join(f"Paragraph {i}. " + PARAGRAPH * 5 for i in range(6))  # ~234 characters each
    chunks = chunk_text(text, max_chars=600)
    assert [len(c.text) <= 600 for c in chunks] == [True] * len(chunks)
    assert len(chunks) == 3  # two whole paragraphs per chunk
    assert chunks[0].text.startswith("Paragraph 0.") and "Paragraph 1." in chunks[0].text
    assert [c.index for c in chunks] == [0, 1, 2]


def test_headings_start_chunks_and_travel_with_them() -> None:
    text = "Intro text.\n\n# Install\n\nRun pip install.\n## Configure\nEdit the file.\n\nRestart."
    chunks = chunk_text(text, title="Guide")
    assert [(c.heading, c.text) for c in chunks] == [
        ("Guide", "Intro text."), ("Install", "Run pip install."), ("Configure", "Edit the file.\n\nRestart.")]
    assert chunks[1].with_heading == "Install\nRun pip install."


def test_long_paragraphs_are_cut_at_sentences_and_long_sentences_at_the_limit() -> None:
    chunks = chunk_text(PARAGRAPH * 40, max_chars=300)
    assert all(len(c.text) <= 300 for c in chunks)
    assert all(c.text.endswith("long.") for c in chunks)
    giant = chunk_text("x" * 1000, max_chars=300)
    assert [len(c.text) for c in giant] == [300, 300, 300, 100]


def test_nothing_to_chunk() -> None:
    assert chunk_text("") == [] and chunk_text("\n\n# Only a heading\n\n") == []


def test_a_headings_closing_hashes_go() -> None:
    chunks = chunk_text("## Title ##\n\nText.\n\n# ##\n\nMore.\n\n#   Spaced   #  \n\nLast.")
    assert [(c.heading, c.text) for c in chunks] == [("Title", "Text."), ("#", "More."), ("Spaced", "Last.")]


def test_hostile_lines_are_chunked_in_linear_time() -> None:
    # one regex over a heading's trailing spaces was cubic: "# a", 4,000 spaces and "b" took 78 s; a line of
    # "#" over a paragraph of spaces was quadratic. A page's text (text/plain passes through) is hostile input
    spaces = " " * 1_000_000
    [chunk] = chunk_text(f"# a{spaces}b\n\ntext", max_chars=100)
    assert chunk.heading == f"a{spaces}b" and chunk.text == "text"
    chunks = chunk_text(f"#\n{spaces}x\ny", max_chars=100)
    assert chunks[0].text.startswith("#") and chunks[-1].text.endswith("y") and chunks[0].heading == ""
