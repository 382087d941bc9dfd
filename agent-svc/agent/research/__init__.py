"""Research jobs: plan, search, read, note, reflect, search again, write (loop.py), on the search, page and
answer stages as they are; every LLM step validated, with a deterministic fallback (plan.py, reflect.py), so that
a job works with a poor LLM or none."""
