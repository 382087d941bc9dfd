"""Pages whose content only a browser sees: a script writes it into the page, so an HTTP fetch reads an empty shell.

`shell` builds the shell of a scripted host's page (and of /_test/js/inserted and /_test/js/delayed); the other
pages are the /_test/js/... routes for a headless browser: a click, typing, scrolling, requests made by a page's
script, a navigation away and a download. Every value that goes into a script is `_js` encoded, every value shown
in the page `html.escape`d: query parameters come from whoever calls the route.
"""

from __future__ import annotations

import html
import json
import re

NOSCRIPT = "Please enable JavaScript to view this page."
MAX_DELAY_MS = 10_000
DOWNLOAD = b"offline-web download\n" + bytes(range(256))

_TITLE = re.compile(rb"<title[^>]*>(.*?)</title\s*>", re.IGNORECASE | re.DOTALL)
_BODY = re.compile(rb"<body[^>]*>(.*?)(?:</body\s*>|\Z)", re.IGNORECASE | re.DOTALL)
_HEAD_END = re.compile(rb"</head\s*>", re.IGNORECASE)

_INSERTED = """<h1>Inserted by script</h1>
<p>The quokka sentence was inserted by a script after the page loaded. A plain HTTP fetch of this page reads an
empty application shell and a notice asking for JavaScript; only a browser that runs the inline script sees these
paragraphs.</p>
<p>Renderers are tested against this page: a headless browser should return the heading and both paragraphs, and
an extractor should keep them as the main content, since they are the only prose the rendered page holds.</p>"""

_DELAYED = """<h1>Delayed by script</h1>
<p>The delayed pangolin sentence was inserted by a timer {ms} milliseconds after the page loaded. A browser that
takes its snapshot as soon as the load event fires misses it; one that waits for the page to settle, or for a
selector, reads it.</p>
<p>Renderers are tested against this page: the wait they are given decides whether this paragraph is part of the
content they return, and an extractor should keep it as the main content of the rendered page.</p>"""

_CLICK_BODY = """<h1>Click, type and scroll</h1>
<p>This page tests the actions a headless browser performs before it reads a page. The button below reveals a
paragraph that is not in the page until it is clicked, the search box echoes what is typed into it once Enter is
pressed, and the page is long enough that scrolling moves it.</p>
<p><button id="reveal">Show more</button> <input id="q" name="q" placeholder="Search"></p>
<div id="more"></div>
<p id="echo"></p>
<p id="scrolled">Scrolled to: 0</p>
<div id="spacer" style="height: 5000px"></div>
<p id="bottom">The bottom of the long page: a browser that scrolled all the way down sees this paragraph.</p>"""

_CLICK_SCRIPT = """const more = %s;
document.getElementById("reveal").addEventListener("click", () => {
  document.getElementById("more").innerHTML = more;
});
document.getElementById("q").addEventListener("keydown", (event) => {
  if (event.key === "Enter") {
    event.preventDefault();
    document.getElementById("echo").textContent = "You searched for: " + event.target.value;
  }
});
window.addEventListener("scroll", () => {
  document.getElementById("scrolled").textContent = "Scrolled to: " + Math.round(window.scrollY);
});"""

_MORE = ("<p>The hidden axolotl paragraph appears only after a click. It was not in the page as served, nor in the "
         "page as first rendered: a renderer returns it only when it clicked the button first.</p>")

_FETCHES_BODY = """<h1>Requests from a script</h1>
<p>The script of this page asks for {to} three ways: with fetch, by opening a WebSocket to the same address, and
with an image. Each line below says whether that attempt succeeded. A renderer that keeps the page's requests to
the addresses it allows should leave all three failed for an address it does not allow.</p>
<p id="fetch-result">fetch: pending</p>
<p id="websocket-result">websocket: pending</p>
<p id="image-result">image: pending</p>"""

_FETCHES_SCRIPT = """const to = new URL(%s, location.href);
const report = (kind, ok) => {
  document.getElementById(kind + "-result").textContent = kind + ": " + (ok ? "ok" : "failed");
};
fetch(to, {mode: "no-cors"}).then(() => report("fetch", true), () => report("fetch", false));
try {
  const socket = new WebSocket(to.href.replace(/^http/, "ws"));
  socket.onopen = () => { report("websocket", true); socket.close(); };
  socket.onerror = () => report("websocket", false);
} catch (error) {
  report("websocket", false);
}
const image = document.createElement("img");
image.onload = () => report("image", true);
image.onerror = () => report("image", false);
image.src = to.href;
document.body.appendChild(image);"""

_NAVIGATE_BODY = """<h1>Navigating away</h1>
<p>The script of this page sends the browser to {to} once the page has loaded. A renderer that follows it reads
another page than the one it was asked for; one that keeps to the addresses it allows stops it first.</p>"""


def shell(title: str, content_html: str, delay_ms: int = 0) -> bytes:
    """An HTML page with `title` and an empty #app into which a script writes `content_html` at
    DOMContentLoaded (`delay_ms` later if given): only its title is readable without running the script."""
    insert = f'document.getElementById("app").innerHTML = {_js(content_html)};'
    if delay_ms:
        insert = f"setTimeout(() => {{ {insert} }}, {delay_ms});"
    return _page(title, "", f'document.addEventListener("DOMContentLoaded", () => {{ {insert} }});')


def scripted(original: bytes) -> bytes:
    """`original` served as a JavaScript shell: its <title> kept, its <body> written in by a script."""
    title = _TITLE.search(original)
    body = _BODY.search(original)
    if body is None:  # no <body> tag: what follows the head is the body, as browsers read it
        head_end = _HEAD_END.search(original)
        content = original[head_end.end():] if head_end else original
    else:
        content = body.group(1)
    return shell(_text(title.group(1)) if title else "", _text(content))


def inserted() -> bytes:
    return shell("Inserted by script", _INSERTED)


def delayed(ms: int) -> bytes:
    """The page of /_test/js/delayed: its content written `ms` milliseconds after load (0 to MAX_DELAY_MS)."""
    ms = max(0, min(ms, MAX_DELAY_MS))
    return shell("Delayed by script", _DELAYED.format(ms=ms), delay_ms=ms)


def click() -> bytes:
    return _page("Click, type and scroll", _CLICK_BODY, _CLICK_SCRIPT % _js(_MORE), app=False)


def fetches(to: str) -> bytes:
    """A page whose script fetches `to`, opens a WebSocket to it and loads it as an image, reporting each."""
    return _page("Requests from a script", _FETCHES_BODY.format(to=html.escape(to)), _FETCHES_SCRIPT % _js(to),
                 app=False)


def navigate(to: str) -> bytes:
    """A page whose script sets location.href to `to` once loaded."""
    script = f'window.addEventListener("load", () => {{ location.href = {_js(to)}; }});'
    return _page("Navigating away", _NAVIGATE_BODY.format(to=html.escape(to)), script, app=False)


def _page(title: str, body: str, script: str, app: bool = True) -> bytes:
    empty_app = f'<div id="app"></div><noscript>{NOSCRIPT}</noscript>' if app else ""
    return (f'<!DOCTYPE html><html><head><meta charset="utf-8"><title>{title}</title></head>'
            f"<body>{empty_app}{body}<script>{script}</script></body></html>").encode()


def _js(value: str) -> str:
    """`value` as a JavaScript string literal that cannot end its <script> element nor open a comment in it."""
    return json.dumps(value).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", errors="replace")  # as the index reads the corpus
