"""agent-svc: the Firecrawl-compatible gateway in front of SearXNG."""
