"""The queries a job asks: the prompt's own parts without an LLM, and an LLM's reply validated."""

from agent.research.queries import decomposed, fresh, interleaved, key, llm_queries

QUESTION = "Which of SQLite and PostgreSQL checkpoints the WAL automatically?"


def test_a_comparison_is_asked_whole_and_once_for_each_side_with_its_core() -> None:
    assert decomposed(QUESTION) == [QUESTION, "Which of SQLite checkpoints WAL automatically",
                                    "PostgreSQL checkpoints the WAL automatically"]


def test_each_item_of_a_list_is_asked_with_the_questions_core_and_not_with_the_other_items() -> None:
    parts = decomposed("What is the double-ended queue type called in Rust's standard library, in the C++ standard "
                       "library, and in Python's collections module?")
    assert parts[1:] == ["What is the double-ended queue type called in Rust's standard library",
                         "in the C++ standard library double-ended queue type called",
                         "in Python's collections module double-ended queue type called standard library"]


def test_clauses_and_sentences_become_queries_of_their_own() -> None:
    # the second clause with the core has the whole question's words: it is not asked twice
    assert decomposed("Which tool creates the wal directory; who maintains that tool today")[1:] == [
        "Which tool creates the wal directory"]
    assert decomposed("Zephyr keeps a journal. Who wrote the tool that makes it? In which year?")[1:] == [
        "Zephyr keeps a journal", "Who wrote the tool that makes it Zephyr keeps journal",
        "In which year Zephyr keeps journal"]


def test_a_question_of_one_part_is_asked_whole_only() -> None:
    assert decomposed("Who wrote the tool that creates the Zephyr database wal directory?") == [
        "Who wrote the tool that creates the Zephyr database wal directory?"]


def test_a_query_asked_before_in_other_words_order_is_not_asked_again() -> None:
    asked = {key("sqlite wal checkpoint")}
    assert fresh(["checkpoint the WAL of SQLite", "the of a", "sqlite vacuum"], asked) == ["sqlite vacuum"]


def test_only_an_llms_valid_queries_about_the_question_are_kept() -> None:
    about = QUESTION
    assert llm_queries('{"queries": ["postgres wal checkpoint", "cute cats", 7, "x", "sqlite wal"]}', about, set()) \
        == ["postgres wal checkpoint", "sqlite wal"]
    assert llm_queries('["sqlite checkpoint"]', about, set()) == ["sqlite checkpoint"]
    assert llm_queries("Sure! Search for sqlite wal.", about, set()) == []
    assert llm_queries('{"queries": "sqlite wal"}', about, set()) == []
    assert llm_queries('{"queries": ["sqlite wal"]}', about, {key("sqlite wal")}) == []


def test_interleaved_takes_one_of_each_in_turn() -> None:
    assert interleaved(["a", "b", "c"], ["x"]) == ["a", "x", "b", "c"]
