"""OpenAI's /v1/models and /v1/chat/completions, as Perplexity's Sonar speaks them: the wire format (wire.py) and
the routes (routes.py)."""
