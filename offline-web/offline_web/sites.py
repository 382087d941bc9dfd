"""The package → host/path mapping of the offline web (the `sites.tsv` format of the reference), and the Debian
version of each package the corpus is built from (a fifth column of ours: the judgments hold for that version)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Site:
    """One documentation package published under the URL prefix of the real site it comes from."""

    package: str
    root: str  # directory inside the extracted package that becomes the site root
    prefix: str  # host plus path, no scheme, e.g. "docs.python.org/3"
    include: re.Pattern[str] | None  # matched against a page's path relative to the site root
    version: str | None = None  # the package's version to download; None: whatever apt offers now

    @property
    def host(self) -> str:
        return self.prefix.split("/", 1)[0]

    def includes(self, relative_path: str) -> bool:
        return self.include is None or self.include.search(relative_path) is not None


def load_sites(path: Path) -> list[Site]:
    """Read a sites file: tab-separated package, root, prefix, then an optional include regex and an optional
    package version (an empty include field before a version: none)."""
    sites = []
    for line_no, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split("\t")
        if len(fields) < 3:
            raise ValueError(f"{path}:{line_no}: expected at least 3 tab-separated fields")
        package, root, prefix = (f.strip() for f in fields[:3])
        include = fields[3].strip() if len(fields) > 3 else ""
        version = fields[4].strip() if len(fields) > 4 else ""
        sites.append(Site(package, root.strip("/"), prefix.strip("/"), re.compile(include) if include else None,
                          version or None))
    return sites


def match_site(sites: list[Site], url_path: str) -> tuple[Site, str] | None:
    """Find the site whose prefix is the longest whole-segment prefix of `host/path`; return it with the rest."""
    url_path = url_path.lstrip("/")
    for site in sorted(sites, key=lambda s: len(s.prefix), reverse=True):
        if url_path == site.prefix or url_path.startswith(site.prefix + "/"):
            return site, url_path[len(site.prefix) :].lstrip("/")
    return None
