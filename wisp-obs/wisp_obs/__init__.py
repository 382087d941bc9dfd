"""Observability shared by agent-svc and semantic-svc, so that both name requests and write logs the same way;
each service keeps its own metrics (agent/metrics.py, semantic/metrics.py)."""
