"""The queries a job asks: the prompt's own parts without an LLM, and an LLM's reply validated."""

from agent.research.queries import decomposed, fresh, interleaved, key, llm_queries

QUESTION = "Which of SQLite and PostgreSQL checkpoints the WAL automatically?"


def test_a_comparison_is_asked_whole_and_once_for_each_side() -> None:
    assert decomposed(QUESTION) == [QUESTION, "Which of SQLite checkpoints the WAL automatically?",
                                    "Which of PostgreSQL checkpoints the WAL automatically?"]


def test_clauses_become_queries_of_their_own() -> None:
    parts = decomposed("Which tool creates the wal directory; who maintains that tool today")
    assert parts[1:] == ["Which tool creates the wal directory", "who maintains that tool today"]


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
