"""The plain types and names that semantic-svc's layers share; it imports none of them, so any may import it."""

from __future__ import annotations

from typing import Literal

# INDEX_LEXICAL: which lexical (sparse) side a new collection of the index gets
LexicalSetting = Literal["auto", "model", "bm25", "off"]
# what a collection's lexical side holds: the embedder's trained head (BGE-M3), or BM25 term weights
Lexical = Literal["model", "bm25"]
