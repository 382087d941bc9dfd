"""Tavily's /search and /extract: the wire format (wire.py) and the routes (routes.py)."""
