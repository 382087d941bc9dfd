"""Download Debian documentation packages and unpack them into a reusable cache, never installing them.

`apt-get install` of these packages has side effects (nodejs-doc removes Node.js, python3.11-doc upgrades
Python), so each .deb is fetched with `apt-get download` and unpacked with `dpkg-deb -x`.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
from pathlib import Path

from offline_web.sites import Site

log = logging.getLogger(__name__)

DEFAULT_CACHE = Path("/var/cache/webcorpus")


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


def ensure_packages(sites: list[Site], cache: Path | None = None) -> dict[str, str]:
    """Make every package of `sites` present in the cache; return {package: Debian version}."""
    cache = cache or cache_dir()
    packages = sorted({s.package for s in sites})
    missing = [p for p in packages if not package_dir(cache, p).is_dir()]
    if missing:
        _download(missing, cache / "debs")
        for package in missing:
            _extract(_deb_of(cache / "debs", package), package_dir(cache, package))
    return {p: (package_dir(cache, p) / ".version").read_text().strip() for p in packages}


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
        stale.unlink()  # keep exactly the version in use, so the index cache key follows updates
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
