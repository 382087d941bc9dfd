"""semantic-svc: the model server (embeddings, reranking, the vector index)."""
