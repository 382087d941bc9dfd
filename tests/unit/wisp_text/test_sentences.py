from wisp_text.chunking import chunk_text
from wisp_text.sentences import sentence_ends, split_sentences

WRAPPED = "The write-ahead log keeps\nreaders going. A checkpoint moves\nits pages back!  Does it?\nYes"


def test_a_sentence_ends_at_a_stop_before_whitespace_or_the_end() -> None:
    assert split_sentences("One. Two!\tThree?  Four") == ["One.", "Two!", "Three?", "Four"]
    assert split_sentences("Really?! Yes... and 3.14 or e.g. this.") == ["Really?!", "Yes...", "and 3.14 or e.g.",
                                                                        "this."]
    assert split_sentences("  \n ") == [] and split_sentences("") == []


def test_a_line_break_ends_a_sentence_only_when_asked() -> None:
    assert split_sentences(WRAPPED) == ["The write-ahead log keeps\nreaders going.",
                                        "A checkpoint moves\nits pages back!", "Does it?", "Yes"]
    assert split_sentences("- WAL mode [1]\n\n- rollback journal [2]\r\nEnd.", at_line_breaks=True) == [
        "- WAL mode [1]", "- rollback journal [2]", "End."]
    assert split_sentences(WRAPPED, at_line_breaks=True) == ["The write-ahead log keeps", "readers going.",
                                                             "A checkpoint moves", "its pages back!", "Does it?", "Yes"]


def test_sentence_ends_are_offsets_just_past_the_stop() -> None:
    text = "Short. Longer one!\nLast?"
    assert sentence_ends(text) == [6, 18, 24]
    assert [text[:end] for end in sentence_ends(text)][1] == "Short. Longer one!"
    assert sentence_ends("no stop at all") == [] and sentence_ends("3.14 and e.g.\n") == [13]


def test_chunking_cuts_a_long_wrapped_paragraph_at_sentence_ends_not_at_its_line_breaks() -> None:
    sentence = "A checkpoint moves the WAL content\nback into the database file. "
    chunks = chunk_text(sentence * 10, max_chars=200)
    assert all(c.text.endswith("database file.") and c.text.startswith("A checkpoint") for c in chunks)
    assert all("content\nback" in c.text for c in chunks)
