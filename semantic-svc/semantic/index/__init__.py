"""The vector index: documents to chunks to vectors (indexing), Qdrant (vector_store) and its BM25
lexical side (lexical)."""
