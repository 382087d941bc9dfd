"""Text stages shared by agent-svc and semantic-svc, so that both cut and score text the same way."""
