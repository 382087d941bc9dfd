"""The words of a text that say what it is about: no stopword, no number, nothing shorter than three letters.
What /v2/similar's seed queries and a research job's plans and follow-ups are made of."""

from __future__ import annotations

from wisp_text.bm25 import tokenize

STOPWORDS = frozenset("""
a about above after again against all also am an and any are as at be because been before being below between
both but by can could did do does doing down during each few for from further had has have having he her here
hers him his how i if in into is it its itself just me more most my no nor not now of off on once only or other
our ours out over own same she should so some such than that the their theirs them then there these they this
those through to too under until up very was we were what when where which while who whom why will with would
you your yours use used using see also may one two new page pages html www http https com org
""".split())


def content_terms(text: str) -> list[str]:
    """`text`'s words (tokenize's, lower-cased) less stopwords, numbers and words under three letters, in order."""
    return [t for t in tokenize(text) if len(t) > 2 and t not in STOPWORDS and not t.isdigit()]
