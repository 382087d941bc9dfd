from agent.answers.extractive import SENTENCES, extractive_draft
from agent.answers.synthesis import Claim, Source

# as pages are packed: hard-wrapped, a heading or a list between blank lines, code blocks and tables among the prose
SQUASH = Source(1, "https://git.test/squash", "Squashing", (
    "Squash commits\n\nTo squash the last three commits, run git rebase -i HEAD~3\nand mark them squash. Git then "
    "opens an editor for the combined commit message.\n\n```\ngit rebase -i HEAD~3 # squash the last commits\n```"
    "\n\n| squash | meld the commit into the one before it |\n- the last commits are squashed in order.",))
REBASE = Source(2, "https://git.test/rebase", "Rebase", (
    "An interactive rebase can reorder, edit or squash commits. See [3] for the history of rebase.",
    "Rebasing rewrites history, so never rebase commits you have pushed.",))
CATS = Source(3, "https://cats.test", "Cats", ("Cats purr and sleep in the sun all day long.",))


def test_the_sentences_that_share_the_most_with_the_question_best_first_each_with_its_sources_marker() -> None:
    answer = extractive_draft("how do I squash my last commits in git", (SQUASH, REBASE, CATS))
    assert answer.claims == (
        Claim("To squash the last three commits, run git rebase -i HEAD~3 and mark them squash.", (1,)),
        Claim("An interactive rebase can reorder, edit or squash commits.", (2,)),
        Claim("Git then opens an editor for the combined commit message.", (1,)),
    ) and len(answer.claims) == SENTENCES
    assert answer.text.splitlines()[0].endswith("mark them squash. [1]") and not answer.abstained


def test_only_prose_is_quoted() -> None:
    quoted = [c.text for c in extractive_draft("squash the last commits", (SQUASH, REBASE, CATS)).claims]
    # not the heading, the code block, the table row, the list item that is a piece of a sentence, the sentence
    # with a bracketed number, nor the one that shares no word with the question
    assert quoted == ["To squash the last three commits, run git rebase -i HEAD~3 and mark them squash.",
                      "An interactive rebase can reorder, edit or squash commits.",
                      "Rebasing rewrites history, so never rebase commits you have pushed."]


def test_a_sentence_found_in_two_passages_is_quoted_once() -> None:
    twice = Source(1, "https://git.test/squash", "Squashing", SQUASH.texts * 2)
    claims = extractive_draft("squash the last commits", (twice,)).claims
    assert len(claims) == len({c.text for c in claims})


def test_sources_that_share_no_word_with_the_question_give_no_claim() -> None:
    assert extractive_draft("zebra migration in kenya", (SQUASH, CATS)).claims == ()
