"""Download Debian documentation packages and unpack them into a reusable cache, never installing them.

`apt-get install` of these packages has side effects (nodejs-doc removes Node.js, python3.11-doc upgrades
Python), so each .deb is fetched with `apt-get download` and unpacked with `dpkg-deb -x`.

A sites file pins each package's version (its fifth column): the judgments of the evaluation and the tests were
made on those pages, which a Debian update renames and rewrites. A pinned package is downloaded at exactly that
version (`apt-get download package=version`), or taken from the .deb already in the cache's debs folder; when
the archive no longer has it, the build stops, naming the package and the version. An unpinned package follows
apt: reused while its version is the one apt offers, replaced after a Debian update.
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
    """Make every package of `sites` present, at its pinned version, else at apt's candidate version; return
    {package: version}. Raises RuntimeError naming a pinned version that can be had neither here nor from apt."""
    cache = cache or cache_dir()
    debs = cache / "debs"
    packages = sorted({s.package for s in sites})
    pins = pinned_versions(sites)
    wanted = {**candidate_versions([p for p in packages if p not in pins]), **pins}
    stale = [p for p in packages if cached_version(cache, p) is None
             or (wanted.get(p) and cached_version(cache, p) != wanted[p])]
    if stale:
        missing = [p for p in stale if p not in pins or _deb_of(debs, p, pins[p]) is None]
        if missing:
            _download([f"{p}={pins[p]}" if p in pins else p for p in missing], debs)
        for package in stale:
            deb = _deb_of(debs, package, pins.get(package))
            if deb is None:
                raise RuntimeError(f"no .deb of {package} {pins.get(package) or ''} in {debs} after apt-get download")
            shutil.rmtree(package_dir(cache, package), ignore_errors=True)
            _extract(deb, package_dir(cache, package))
            for site in (s for s in sites if s.package == package):
                prune(site, site_dir(cache, site))
    return {p: cached_version(cache, p) or "" for p in packages}


def pinned_versions(sites: list[Site]) -> dict[str, str]:
    """{package: version} of the packages a site pins; two sites of one package must not disagree."""
    pins: dict[str, str] = {}
    for site in sites:
        if site.version and pins.setdefault(site.package, site.version) != site.version:
            raise ValueError(f"{site.package} is pinned at both {pins[site.package]} and {site.version}")
    return pins


def candidate_versions(packages: list[str]) -> dict[str, str]:
    """The version apt would download now, per package; empty when apt knows none (no package lists)."""
    if not packages:
        return {}
    result = subprocess.run(["apt-cache", "policy", *packages], capture_output=True, text=True)
    return {name: version for name, version in _CANDIDATE.findall(result.stdout) if version != "(none)"}


def archive_versions(package: str) -> list[str]:
    """The versions of `package` the archive apt reads offers now (`apt-cache madison`), newest first."""
    result = subprocess.run(["apt-cache", "madison", package], capture_output=True, text=True)
    return [fields[1] for line in result.stdout.splitlines()
            if len(fields := [f.strip() for f in line.split("|")]) >= 3 and fields[0] == package]


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


def _download(specs: list[str], debs: Path) -> None:
    """`apt-get download` of `specs` (package or package=version) into `debs`, refreshing apt's lists once if it
    fails; a pinned version the archive no longer offers is named in the error."""
    debs.mkdir(parents=True, exist_ok=True)
    command = ["apt-get", "download", *specs]
    if subprocess.run(command, cwd=debs, capture_output=True).returncode == 0:
        return
    log.info("apt-get download failed; refreshing the package lists once and retrying")
    subprocess.run(["apt-get", "update", "-qq"], check=True, capture_output=True)
    result = subprocess.run(command, cwd=debs, capture_output=True, text=True)
    if result.returncode == 0:
        return
    gone = [(package, version, offered) for package, _, version in (spec.partition("=") for spec in specs)
            if version and version not in (offered := archive_versions(package))]
    if gone:
        raise RuntimeError("".join(
            f"{package} {version} is no longer in the Debian archive apt reads (it offers "
            f"{', '.join(offered) or 'no version'}). " for package, version, offered in gone)
            + f"The offline web's pages and the judgments made on them are those of the pinned versions: put each "
            f"pinned .deb in {debs} (snapshot.debian.org keeps every version), or check the judgments against a "
            "version the archive has (python -m wisp_eval check) and change the pin in the sites file.")
    raise RuntimeError(f"apt-get download {' '.join(specs)} failed: {result.stderr.strip()}")


def _deb_of(debs: Path, package: str, version: str | None = None) -> Path | None:
    """The .deb of `package` to unpack: the one of `version` (None when there is none), else the newest
    downloaded. The others of the package are deleted: the folder keeps exactly the version in use."""
    found = sorted(debs.glob(f"{package}_*.deb"), key=lambda p: p.stat().st_mtime)
    chosen = next((deb for deb in found if _deb_version(deb) == version), None) if version else \
        (found[-1] if found else None)
    for stale in found:
        if chosen is not None and stale != chosen:
            stale.unlink()
    return chosen


def _deb_version(deb: Path) -> str:
    return subprocess.run(["dpkg-deb", "-f", str(deb), "Version"], check=True, capture_output=True,
                          text=True).stdout.strip()


def _extract(deb: Path, target: Path) -> None:
    """Unpack into a temporary directory and rename it, so an interrupted run never looks complete."""
    tmp = target.with_name(target.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    subprocess.run(["dpkg-deb", "-x", str(deb), str(tmp)], check=True)
    (tmp / ".version").write_text(_deb_version(deb) + "\n")
    tmp.rename(target)
