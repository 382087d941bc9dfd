"""A searx/SearXNG engine module for the offline web's search engine; searx loads it by absolute path.

It runs inside searx's own interpreter (Debian's /usr/bin/python3), so it imports only what searx has.
Every key of the engine's settings block is set on this module by searx: base_url, backend_cat,
result_template, emit_extras and hosts come from there. Unlike the stock json_engine, it forwards language,
time range and safe search, and returns published dates, image sources and resolutions.
"""

from datetime import datetime
from json import loads
from urllib.parse import urlencode

about = {}  # current SearXNG requires it
base_url = "http://127.0.0.1:8899"
backend_cat = "general"
paging = True
time_range_support = True
safesearch = True
result_template = ""
emit_extras = False  # an answer, a correction and an infobox, as rich engines send them
hosts = ""  # comma-separated: the only hosts this engine finds pages on; empty: all


def request(query, params):
    args = {
        "q": query,
        "format": "json",
        "cat": backend_cat,
        "pageno": params["pageno"],
        "time_range": params.get("time_range") or "",
        "language": params.get("language") or "",
        "safesearch": params.get("safesearch", 0),
    }
    if hosts:
        args["hosts"] = hosts
    params["url"] = base_url + "/search?" + urlencode(args)
    return params


def response(resp):
    results = []
    for hit in loads(resp.text).get("results", []):
        result = {"url": hit["url"], "title": hit["title"], "content": hit.get("content", "")}
        if hit.get("published"):
            result["publishedDate"] = datetime.fromisoformat(hit["published"])
        if result_template == "images.html":
            result.update(template="images.html", img_src=hit["img"], thumbnail_src=hit["img"],
                          resolution=hit.get("resolution", ""))
        results.append(result)
    if emit_extras and results:
        results.append({"answer": "offline answer: " + results[0]["title"]})
        results.append({"correction": results[0]["title"].lower()})
        results.append({"infobox": results[0]["title"], "id": results[0]["url"], "content": results[0]["content"],
                        "urls": [{"title": "home", "url": results[0]["url"]}]})
    return results
