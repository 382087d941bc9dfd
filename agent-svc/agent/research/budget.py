"""What a job may spend at each effort (Tavily's mini, pro and auto are low, medium and high): rounds of searches,
searches a round, results a search, LLM calls, and the wall-clock limit, of which the report keeps a share."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Budget:
    rounds: int  # search, note, reflect: the first round's queries come from the plan
    queries: int  # searches a round
    results: int  # results a search returns, its passages noted
    llm_calls: int  # plan and follow-ups; the report's own calls are not counted here
    wall_s: float
    write_share: float = 0.3  # of wall_s, kept for the report

    @property
    def write_reserve_s(self) -> float:
        return self.wall_s * self.write_share


EFFORT_BUDGETS = {
    "low": Budget(rounds=2, queries=3, results=5, llm_calls=3, wall_s=60.0),
    "medium": Budget(rounds=3, queries=5, results=8, llm_calls=5, wall_s=120.0),
    "high": Budget(rounds=5, queries=6, results=8, llm_calls=9, wall_s=300.0),
}
TAVILY_MODELS = {"mini": "low", "pro": "medium", "auto": "medium"}
