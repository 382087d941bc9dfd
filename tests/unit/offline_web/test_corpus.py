import dataclasses
import shutil
import subprocess
from pathlib import Path

import pytest

from offline_web import corpus
from offline_web.sites import load_sites

ROOT = Path(__file__).resolve().parents[3]

POLICY = """sqlite3-doc:
  Installed: (none)
  Candidate: 3.40.1-2+deb12u2
  Version table:
     3.40.1-2+deb12u2 500
git-doc:
  Installed: (none)
  Candidate: 1:2.39.5-0+deb12u3
unknown-doc:
  Installed: (none)
  Candidate: (none)
"""


def test_candidate_versions_parse_apt_cache_policy(monkeypatch) -> None:
    def fake_run(command, **kwargs):
        assert command[:2] == ["apt-cache", "policy"]
        return subprocess.CompletedProcess(command, 0, stdout=POLICY, stderr="")

    monkeypatch.setattr(corpus.subprocess, "run", fake_run)
    assert corpus.candidate_versions(["sqlite3-doc", "git-doc", "unknown-doc"]) == {
        "sqlite3-doc": "3.40.1-2+deb12u2", "git-doc": "1:2.39.5-0+deb12u3"}


def test_prune_removes_page_trees_the_include_regex_never_keeps(tmp_path: Path) -> None:
    root = tmp_path / "html"
    for relative in ("book/ch01.html", "std/index.html", "core/index.html", "core/deep/x.html", "static.files/a.css"):
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text("x")
    sites_file = tmp_path / "sites.tsv"
    sites_file.write_text("rust-doc\thtml\tdoc.rust-lang.org/1.63.0\t^(book|std)/\n")
    [site] = load_sites(sites_file)
    assert corpus.prune(site, root) == 1
    assert sorted(p.name for p in root.iterdir()) == ["book", "static.files", "std"]  # assets stay


def test_an_updated_package_is_downloaded_again(tmp_path: Path, monkeypatch) -> None:
    sites_file = tmp_path / "sites.tsv"
    sites_file.write_text("alpha-doc\tusr/share/alpha\twww.alpha.org\t\n")
    sites = load_sites(sites_file)
    (tmp_path / "pkgs/alpha-doc").mkdir(parents=True)
    (tmp_path / "pkgs/alpha-doc/.version").write_text("1.0\n")
    downloaded: list[list[str]] = []

    def fake_extract(deb: Path, target: Path) -> None:
        target.mkdir(parents=True)
        (target / ".version").write_text("2.0\n")

    monkeypatch.setattr(corpus, "_download", lambda packages, debs: downloaded.append(packages))
    monkeypatch.setattr(corpus, "_deb_of", lambda debs, package, version=None: Path(f"{package}_2.0_all.deb"))
    monkeypatch.setattr(corpus, "_extract", fake_extract)

    monkeypatch.setattr(corpus, "candidate_versions", lambda packages: {"alpha-doc": "1.0"})
    assert corpus.ensure_packages(sites, tmp_path) == {"alpha-doc": "1.0"} and downloaded == []
    monkeypatch.setattr(corpus, "candidate_versions", lambda packages: {})  # no package lists: keep the cache
    assert corpus.ensure_packages(sites, tmp_path) == {"alpha-doc": "1.0"} and downloaded == []
    monkeypatch.setattr(corpus, "candidate_versions", lambda packages: {"alpha-doc": "2.0"})
    assert corpus.ensure_packages(sites, tmp_path) == {"alpha-doc": "2.0"} and downloaded == [["alpha-doc"]]


def fake_apt(monkeypatch: pytest.MonkeyPatch, archive: dict[str, list[str]]) -> list[list[str]]:
    """apt as far as the corpus uses it, over `archive` ({package: versions it offers}); returns the commands run.
    A .deb's file name carries its version, as apt-get download names it."""
    commands: list[list[str]] = []

    def run(command: list[str], cwd: Path | None = None, **kwargs: object) -> subprocess.CompletedProcess:
        commands.append(command)
        if command[:2] == ["apt-get", "download"]:
            wanted = [spec.partition("=") for spec in command[2:]]
            if any(version and version not in archive.get(package, []) for package, _, version in wanted):
                return subprocess.CompletedProcess(command, 100, "", "E: Version not found")
            for package, _, version in wanted:
                (Path(cwd) / f"{package}_{version or archive[package][0]}_all.deb").write_text("deb")
        if command[:2] == ["apt-cache", "madison"]:
            lines = [f"{command[2]} | {version} | http://deb.debian.org/debian bookworm/main all Packages"
                     for version in archive.get(command[2], [])]
            return subprocess.CompletedProcess(command, 0, "\n".join(lines), "")
        if command[:2] == ["apt-cache", "policy"]:
            raise AssertionError(f"apt asked for the candidate of a pinned package: {command}")
        return subprocess.CompletedProcess(command, 0, "", "")

    def extract(deb: Path, target: Path) -> None:
        target.mkdir(parents=True)
        (target / ".version").write_text(corpus._deb_version(deb) + "\n")

    monkeypatch.setattr(corpus.subprocess, "run", run)
    monkeypatch.setattr(corpus, "_deb_version", lambda deb: deb.name.split("_")[1])
    monkeypatch.setattr(corpus, "_extract", extract)
    return commands


def pinned_sites(tmp_path: Path, version: str) -> list:
    sites_file = tmp_path / "sites.tsv"
    sites_file.write_text(f"alpha-doc\tusr/share/alpha\twww.alpha.org\t\t{version}\n"
                          f"alpha-doc\tusr/share/alpha/api\tapi.alpha.org\t^ref/\t{version}\n")
    return load_sites(sites_file)


def test_a_pinned_version_is_downloaded_exactly_and_kept_whatever_apt_offers(tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    commands = fake_apt(monkeypatch, {"alpha-doc": ["2.0", "1.0"]})  # 2.0 is apt's candidate now
    sites = pinned_sites(tmp_path, "1.0")
    assert [site.version for site in sites] == ["1.0", "1.0"]
    assert corpus.ensure_packages(sites, tmp_path) == {"alpha-doc": "1.0"}
    assert commands == [["apt-get", "download", "alpha-doc=1.0"]]
    assert corpus.ensure_packages(sites, tmp_path) == {"alpha-doc": "1.0"} and len(commands) == 1  # no apt at all
    shutil.rmtree(tmp_path / "pkgs")  # unpacked again from the pinned .deb the cache kept
    assert corpus.ensure_packages(sites, tmp_path) == {"alpha-doc": "1.0"} and len(commands) == 1


def test_a_pinned_version_the_archive_no_longer_has_stops_the_build_naming_it(tmp_path: Path,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    fake_apt(monkeypatch, {"alpha-doc": ["2.0"]})
    with pytest.raises(RuntimeError, match=r"^alpha-doc 1\.0 is no longer in the Debian archive apt reads \(it offers "
                                           r"2\.0\)\. .*put each pinned \.deb in .*/debs \(snapshot\.debian\.org"):
        corpus.ensure_packages(pinned_sites(tmp_path, "1.0"), tmp_path)
    assert not (tmp_path / "pkgs" / "alpha-doc").exists()


def test_two_sites_of_one_package_cannot_pin_two_versions(tmp_path: Path) -> None:
    sites = pinned_sites(tmp_path, "1.0")
    with pytest.raises(ValueError, match=r"alpha-doc is pinned at both 1\.0 and 2\.0"):
        corpus.pinned_versions([sites[0], dataclasses.replace(sites[1], version="2.0")])


@pytest.mark.parametrize(("sites", "judged"), [
    ("eval/data/sites.tsv", "eval/data/dev/versions.tsv"),
    ("tests/fixtures/sites-mini.tsv", "tests/fixtures/eval-mini/versions.tsv"),
])
def test_the_sites_files_pin_every_package_at_the_version_its_judgments_were_made_on(sites: str, judged: str) -> None:
    versions = dict(line.split("\t") for line in (ROOT / judged).read_text().splitlines()
                    if line.strip() and not line.startswith("#"))
    loaded = load_sites(ROOT / sites)
    assert corpus.pinned_versions(loaded) == {site.package: versions[site.package] for site in loaded}
    assert all(site.version for site in loaded)
