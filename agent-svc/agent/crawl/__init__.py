"""Crawling into the vector index through Firecrawl's crawl API (POST/GET/DELETE /v2/crawl).

One job is one crawl: `options` parses Firecrawl's request into `CrawlOptions`; `crawler` owns the flow
(seeds and sitemaps → frontier → politeness → fetch with the SSRF guard → extract → index → links within
`scope`, checked against `robots`); `jobs` persists every job and its frontier in SQLite, so a crawl survives a
restart of agent-svc; `manager` runs, cancels and resumes the jobs; `wire` shapes Firecrawl's responses.
"""
