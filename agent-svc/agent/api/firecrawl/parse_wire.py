"""POST /v2/parse as firecrawl-py's and firecrawl-js's `parse` send it: multipart/form-data with the file in the
`file` field and the scrape options as a JSON string in `options` (lenient like scrape's: unknown keys accepted
and ignored, known keys strictly typed); the options become a ParseJob. What needs a page to load (actions,
waitFor, a screenshot, ...) is refused as Firecrawl refuses it. And GET /v2/parse/formats' list of file types."""

from __future__ import annotations

from typing import Any

from fastapi import Request
from pydantic import Field, StrictBool, StrictStr
from starlette.datastructures import UploadFile
from starlette.exceptions import HTTPException

from agent.api.bodies import parsed
from agent.api.firecrawl.scrape_wire import MAX_ACTIONS, MAX_FORMATS, MAX_HEADERS, MAX_TAGS, MAX_TIMEOUT_MS
from agent.api.firecrawl.search_wire import ScrapeOptions
from agent.core.formats import DOCUMENT_FORMATS, FIRECRAWL_FORMATS, PAGE_ASK_KINDS
from agent.errors import BadRequest, InvalidJson, InvalidRequest, UnsupportedParseOption
from agent.pages.uploads import FILE_TYPES, Upload
from agent.search.parse import ParseJob

MISSING_FILE = ("Missing file upload. Send multipart/form-data with a 'file' field and optional 'options' JSON "
                "string.")  # Firecrawl's wording
MAX_FIELDS = 8  # the SDKs send two
# formats that need a page to load, with Firecrawl's refusal of each
_REFUSED_FORMATS = {"screenshot": "Parse uploads do not support screenshot output.",
                    "screenshot@fullPage": "Parse uploads do not support screenshot output.",
                    "branding": "Parse uploads do not support branding output.",
                    "changeTracking": "Parse uploads do not support change tracking.",
                    "audio": "Parse uploads do not support audio output.",
                    "video": "Parse uploads do not support video output."}


class ParseOptions(ScrapeOptions):
    """The `options` JSON: Firecrawl's scrape options less the URL (its own ParseOptions is ScrapeOptions)."""

    includeTags: list[StrictStr] | None = Field(None, max_length=MAX_TAGS)  # noqa: N815 - Firecrawl's wire names
    excludeTags: list[StrictStr] | None = Field(None, max_length=MAX_TAGS)  # noqa: N815
    headers: dict[str, StrictStr] | None = Field(None, max_length=MAX_HEADERS)
    actions: list[dict[str, Any]] | None = Field(None, max_length=MAX_ACTIONS)
    location: dict[str, Any] | None = None
    proxy: StrictStr | None = None
    zeroDataRetention: StrictBool | None = None  # noqa: N815 - a parse keeps nothing anyway
    origin: StrictStr | None = None
    integration: StrictStr | None = None

    def to_job(self, default_timeout_s: float) -> ParseJob:
        """The job these options ask for; a 400 naming what is wrong, or what a parse cannot do."""
        self._refuse_page_options()
        items = self.formats or [{"type": "markdown"}]
        names = [str(item["type"]) for item in items]
        if len(items) > MAX_FORMATS:
            raise InvalidRequest.check(f"formats may name at most {MAX_FORMATS} formats", ["formats"])
        if unknown := sorted(set(names) - FIRECRAWL_FORMATS):
            raise InvalidRequest.check(f"unknown formats {unknown}", ["formats"])
        if refused := [_REFUSED_FORMATS[name] for name in names if name in _REFUSED_FORMATS]:
            raise UnsupportedParseOption(refused[0])
        try:
            asks = self.page_asks()
        except BadRequest as e:
            raise InvalidRequest.check(e.message, ["formats"]) from None
        timeout_ms = min(self.timeout or round(default_timeout_s * 1000), MAX_TIMEOUT_MS)
        return ParseJob(tuple(dict.fromkeys(n for n in names if n in DOCUMENT_FORMATS)), asks,
                        self.onlyMainContent is not False, timeout_ms, self._warnings(names))

    def _refuse_page_options(self) -> None:
        """Firecrawl's refusals of what only a page loading in a browser could do."""
        refusals = ((bool(self.actions), "Parse uploads do not support actions."),
                    (bool(self.waitFor), "Parse uploads do not support waitFor."),
                    (self.location is not None, "Parse uploads do not support location overrides."),
                    (bool(self.mobile), "Parse uploads do not support mobile rendering."),
                    (self.proxy not in (None, "auto", "basic"),
                     "Parse uploads only support proxy values of auto or basic."))
        if refused := next((message for refuses, message in refusals if refuses), None):
            raise UnsupportedParseOption(refused)

    def _warnings(self, names: list[str]) -> tuple[str, ...]:
        warnings = []
        if self.timeout and self.timeout > MAX_TIMEOUT_MS:
            warnings.append(f"timeout {self.timeout} ms is above Wisp's limit: the parse had {MAX_TIMEOUT_MS} ms")
        if skipped := sorted(set(names) - set(DOCUMENT_FORMATS) - set(PAGE_ASK_KINDS)):
            warnings.append(f"formats {skipped} are not supported and were skipped")
        if ignored := [name for name, value in (("includeTags", self.includeTags), ("excludeTags", self.excludeTags),
                                                ("headers", self.headers)) if value]:
            warnings.append(f"{', '.join(ignored)} are not supported and were ignored")
        return tuple(warnings)


async def read_parse_request(request: Request) -> tuple[Upload, ParseOptions]:
    """The uploaded file and its options; a 400 when the body is not such a form, the file is missing, or the
    options are not a JSON object of valid options (within the request limits, as every JSON body)."""
    try:
        async with request.form(max_files=2, max_fields=MAX_FIELDS) as form:  # 2: a file sent as `options` too
            file, raw = form.get("file"), form.get("options")
            if not isinstance(file, UploadFile):
                raise InvalidRequest.check(MISSING_FILE, ["file"])
            if len(form.getlist("file")) > 1:
                raise InvalidRequest.check("Send one file in the 'file' field.", ["file"])
            if raw is not None and not isinstance(raw, str):
                raise InvalidRequest.check("The 'options' field must be a JSON string.", ["options"])
            upload = Upload((file.filename or "").strip() or "upload", file.content_type, await file.read())
    except HTTPException as e:  # python-multipart's refusals: a malformed body, a second file, too many fields
        raise InvalidRequest.check(f"Bad multipart/form-data body: {e.detail}") from None
    try:
        options = parsed((raw or "{}").encode(), ParseOptions, request.app.state.request_limits)
    except InvalidJson:
        raise InvalidRequest.check("Invalid JSON in the 'options' field. Provide a valid JSON string.",
                                   ["options"]) from None
    return upload, options


def formats_body() -> dict[str, Any]:
    """GET /v2/parse/formats: the file types Wisp reads, as firecrawl-py's `get_parse_formats` reads them."""
    return {"success": True, "data": {"formats": [
        {"format": kind.name, "kind": "document", "extensions": list(kind.extensions),
         "mimeTypes": list(kind.declared), "available": True} for kind in FILE_TYPES]}}
