"""Where the extra candidate sources' tier states live (core/tiers.py): memory.py in the process (one replica),
redis.py in the Redis of REDIS_URL (every replica; the process's state while Redis is out of reach)."""
