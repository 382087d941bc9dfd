"""Where the vector index is kept: Qdrant (vector_store), the BM25 lexical side of a collection without a
trained one (lexical), and the embedded index's folder lock (folder_lock)."""
