import pytest

from agent.answers.claims import verdict_reason
from agent.answers.grounding import key_terms, missing_terms

PASSAGE = ("Python 3.11 adds the 7-bit tomllib module. Run git commit --amend to fix the last commit. "
           "PostgreSQL allows 1000 connections; set max_connections in /etc/postgresql/15/main/postgresql.conf.")


@pytest.mark.parametrize(("claim", "terms"), [
    ("Python 3.11 adds the tomllib module.", ("3.11",)),
    ("Run git commit --amend to fix it.", ("--amend",)),
    ("Set `max_connections` in PostgreSQL, e.g. to 1,000.", ("max_connections", "PostgreSQL", "1,000")),
    ("Use os.path.join() on /usr/share/doc.", ("os.path.join()", "/usr/share/doc")),
    ("The HttpClient class of Django.", ("HttpClient", "Django")),
    ("Call std::swap or MaybeUninit::uninit() before end().", ("std::swap", "MaybeUninit::uninit()", "end()")),
    ("It targets wasm32 and B-trees of sqlite3_module.xBestIndex.", ("wasm32", "sqlite3_module.xBestIndex",
                                                                    "B-trees")),
])
def test_the_key_terms_are_numbers_versions_identifiers_and_names(claim: str, terms: tuple[str, ...]) -> None:
    assert key_terms(claim) == terms


@pytest.mark.parametrize("claim", [
    "Python v3.11 adds tomllib.",  # v3.11 = 3.11
    "PostgreSQL allows 1,000 connections.",  # 1,000 = 1000
    "postgresql reads MAX_CONNECTIONS from /etc/postgresql/15/main/postgresql.conf.",  # case ignored
    "The --amend flag of git commit fixes the last commit.",
    "Python 3.11 adds a 7-bit tomllib.",  # 7 is in 7-bit
])
def test_a_claim_whose_terms_the_passage_holds_misses_nothing(claim: str) -> None:
    assert missing_terms(claim, [PASSAGE]) == ()


@pytest.mark.parametrize(("claim", "missing"), [
    ("Python 3.12 adds the tomllib module.", ("3.12",)),
    ("Python 3.1 adds the tomllib module.", ("3.1",)),  # not a part of 3.11
    ("Run git commit --fixup to fix the last commit.", ("--fixup",)),
    ("PostgreSQL allows 100 connections.", ("100",)),
    ("Set max_conn in postgresql.conf.", ("max_conn",)),
    ("MySQL allows 1000 connections.", ("MySQL",)),
    ("Python 3.11 does not add the tomllib module.", ("not",)),
    ("Run git commit --amend-all to fix it.", ("--amend-all",)),
    ("Python 3.11.2 adds the tomllib module.", ("3.11.2",)),
])
def test_a_changed_number_flag_name_or_an_added_negation_is_missing(claim: str, missing: tuple[str, ...]) -> None:
    assert missing_terms(claim, [PASSAGE]) == missing


def test_the_reason_names_the_low_similarity_and_the_missing_terms() -> None:
    assert verdict_reason(0.8, 0.55, ()) is None
    assert verdict_reason(0.4, 0.55, ()) == "probability 0.40 is below the floor 0.55"
    assert verdict_reason(0.4, 0.55, ("3.12", "--fixup")) == ("probability 0.40 is below the floor 0.55; "
                                                              "not in the cited passages: 3.12, --fixup")


@pytest.mark.parametrize(("claim", "passage"), [
    ("The release came out on 2009-10-14.", "The release came out on 2009-10-14."),
    ("Listing 12-4 shows the loop.", "Listing 12-4 shows the loop."),
])
def test_a_copied_date_or_range_holds_its_numbers(claim: str, passage: str) -> None:
    assert missing_terms(claim, [passage]) == ()
