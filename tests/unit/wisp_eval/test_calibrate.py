from wisp_eval.calibrate import Gap, distribution, margin_table, recommend

GAPS = [Gap("q", "a", 3, 0.0, "ok"), Gap("q", "b", 2, 0.2, "ok"), Gap("q", "c", 0, 0.1, "ok"),
        Gap("q", "d", 0, 0.6, "not fetched"), Gap("r", "e", 2, 0.35, "ok"), Gap("r", "f", 1, 0.3, "ok")]


def test_margins_keep_shares_of_relevant_and_irrelevant() -> None:
    rows = {r["margin"]: r for r in margin_table(GAPS, [0.1, 0.2, 0.35, 0.6])}
    assert rows[0.1] == {"margin": 0.1, "relevant_kept": 0.333, "irrelevant_kept": 0.5}
    assert rows[0.35]["relevant_kept"] == 1.0 and rows[0.6]["irrelevant_kept"] == 1.0


def test_recommendation_is_the_smallest_margin_keeping_the_share() -> None:
    assert recommend(GAPS) == 0.35
    assert recommend(GAPS, keep_share=0.6) == 0.2
    assert recommend([]) is None


def test_distribution_groups() -> None:
    groups = distribution(GAPS)
    assert groups["grade >= 2"]["n"] == 3 and groups["grade >= 2"]["max"] == 0.35
    assert groups["snippet stood in"]["n"] == 1 and groups["grade 1"]["p50"] == 0.3
