import math

from agent.core.hits import Hit
from agent.ranking.candidates import Candidate
from agent.ranking.features import FEATURES, page_features


def test_each_feature_has_a_value_per_candidate() -> None:
    candidates = [Candidate(Hit("https://git-scm.com/docs/git-rebase.html", "git-rebase(1)", ""), 1),
                  Candidate(Hit("https://git-scm.com/docs/git-commit.html", "git-commit(1)", ""), 2)]
    columns = page_features("git rebase interactive", candidates, [0.2, 0.4], None)
    assert set(columns) == set(FEATURES) and all(len(v) == 2 for v in columns.values())
    assert columns["prior"] == [0.0, -math.log(2)] and columns["pass1"] == [0.0, 0.0]
    assert columns["title"][0] > columns["title"][1]  # "rebase" is in the first page's title and URL
