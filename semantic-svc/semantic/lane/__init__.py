"""How model work runs: the single model lane with its priorities and batches, the speed it measures, the
embedding cache, and the heap trimmer."""
