"""Extra candidate sources beside SearXNG (SEARCH_SOURCES): other search APIs (Tavily's, Firecrawl's, Exa's, a
second SearXNG) asked in parallel with it within a bound, through tiers that park on a 402 and back off on a 429
or a 5xx (routing.py). Each kind is one module that asks and reads its API (calls.py holds what they share), and
one line in kinds.py."""
