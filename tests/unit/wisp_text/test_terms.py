from wisp_text.terms import content_terms


def test_content_terms_drop_stopwords_numbers_and_short_words_and_keep_order() -> None:
    assert content_terms("What is the WAL checkpoint of SQLite 3.40 in a db?") == ["wal", "checkpoint", "sqlite"]
    assert content_terms("foreign_keys on") == ["foreign_keys", "foreign", "keys"]
