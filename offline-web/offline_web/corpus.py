"""Download Debian documentation packages and unpack them into a reusable cache, never installing them.

`apt-get install` of these packages has side effects (nodejs-doc removes Node.js, python3.11-doc upgrades
Python), so each .deb is fetched with `apt-get download` and unpacked with `dpkg-deb -x`. An unpacked
package is reused while its version is still the one apt offers; a Debian update replaces it.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import subprocess
from pathlib import Path

from offline_web.sites import Site

log = logging.getLogger(__name__)

DEFAULT_CACHE = Path("/var/cache/webcorpus")
_CANDIDATE = re.compile(r"^(\S+):\n(?:.*\n)*?\s+Candidate: (\S+)", re.MULTILINE)


def cache_dir() -> Path:
    """The corpus cache: `$WEBCORPUS_CACHE`, else /var/cache/webcorpus, else (not writable) ~/.cache/webcorpus."""
    if os.environ.get("WEBCORPUS_CACHE"):
        return Path(os.environ["WEBCORPUS_CACHE"])
    try:
        DEFAULT_CACHE.mkdir(parents=True, exist_ok=True)
        if os.access(DEFAULT_CACHE, os.W_OK):
            return DEFAULT_CACHE
    except OSError:
        pass
    return Path.home() / ".cache" / "webcorpus"


def package_dir(cache: Path, package: str) -> Path:
    return cache / "pkgs" / package


def site_dir(cache: Path, site: Site) -> Path:
    """Where the pages of `site` lie once its package is unpacked."""
    return package_dir(cache, site.package) / site.root


def cached_version(cache: Path, package: str) -> str | None:
    marker = package_dir(cache, package) / ".version"
    return marker.read_text().strip() if marker.is_file() else None


def ensure_packages(sites: list[Site], cache: Path | None = None) -> dict[str, str]:
    """Make every package of `sites` present, at apt's candidate version; return {package: version}."""
    cache = cache or cache_dir()
    packages = sorted({s.package for s in sites})
    candidates = candidate_versions(packages)
    stale = [p for p in packages if cached_version(cache, p) is None
             or (candidates.get(p) and cached_version(cache, p) != candidates[p])]
    if stale:
        _download(stale, cache / "debs")
        for package in stale:
            shutil.rmtree(package_dir(cache, package), ignore_errors=True)
            _extract(_deb_of(cache / "debs", package), package_dir(cache, package))
            for site in (s for s in sites if s.package == package):
                prune(site, site_dir(cache, site))
    return {p: cached_version(cache, p) or "" for p in packages}


def candidate_versions(packages: list[str]) -> dict[str, str]:
    """The version apt would download now, per package; empty when apt knows none (no package lists)."""
    result = subprocess.run(["apt-cache", "policy", *packages], capture_output=True, text=True)
    return {name: version for name, version in _CANDIDATE.findall(result.stdout) if version != "(none)"}


def prune(site: Site, root: Path) -> int:
    """Delete the top-level directories of a site that hold pages but none its include regex keeps.

    rust-doc unpacks 32,000 pages of which the sites file indexes 2,600; the rest would only cost disk.
    Directories without pages (stylesheets, scripts, fonts) stay. Links from kept pages into pruned trees
    then answer 404, as dead links do on the web.
    """
    if site.include is None or not root.is_dir():
        return 0
    removed = 0
    for child in sorted(p for p in root.iterdir() if p.is_dir() and not p.is_symlink()):
        pages = [page.relative_to(root).as_posix() for page in child.rglob("*.html")]
        if pages and not any(site.includes(page) for page in pages):
            shutil.rmtree(child)
            removed += 1
    return removed


def _download(packages: list[str], debs: Path) -> None:
    debs.mkdir(parents=True, exist_ok=True)
    command = ["apt-get", "download", *packages]
    if subprocess.run(command, cwd=debs, capture_output=True).returncode == 0:
        return
    log.info("apt-get download failed; refreshing the package lists once and retrying")
    subprocess.run(["apt-get", "update", "-qq"], check=True, capture_output=True)
    result = subprocess.run(command, cwd=debs, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"apt-get download {' '.join(packages)} failed: {result.stderr.strip()}")


def _deb_of(debs: Path, package: str) -> Path:
    candidates = sorted(debs.glob(f"{package}_*.deb"), key=lambda p: p.stat().st_mtime)
    if not candidates:
        raise RuntimeError(f"no .deb for {package} in {debs}")
    for stale in candidates[:-1]:
        stale.unlink()  # keep exactly the version in use
    return candidates[-1]


def _extract(deb: Path, target: Path) -> None:
    """Unpack into a temporary directory and rename it, so an interrupted run never looks complete."""
    tmp = target.with_name(target.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    subprocess.run(["dpkg-deb", "-x", str(deb), str(tmp)], check=True)
    version = subprocess.run(
        ["dpkg-deb", "-f", str(deb), "Version"], check=True, capture_output=True, text=True
    ).stdout.strip()
    (tmp / ".version").write_text(version + "\n")
    tmp.rename(target)
