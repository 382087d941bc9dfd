"""Wisp's evaluation harness: run a query set through every retrieval mode and SearXNG, score and compare."""
