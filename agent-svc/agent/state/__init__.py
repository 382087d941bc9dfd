"""What agent-svc replicas share: one package a kind (jobs/, limits/, usage/, recent/, extracts/, page_cache/,
politeness/), each its interface in `__init__.py` beside its stores (memory.py, or sqlite.py / disk.py, and
redis.py); the replicas' task queue (tasks.py) and leased slots (leased_slots.py); and where the Redis of
REDIS_URL is opened (shared.py). Only this package imports redis and saq (.importlinter)."""
