import subprocess
from pathlib import Path

from offline_web import corpus
from offline_web.sites import load_sites

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
    monkeypatch.setattr(corpus, "_deb_of", lambda debs, package: Path(f"{package}_2.0_all.deb"))
    monkeypatch.setattr(corpus, "_extract", fake_extract)

    monkeypatch.setattr(corpus, "candidate_versions", lambda packages: {"alpha-doc": "1.0"})
    assert corpus.ensure_packages(sites, tmp_path) == {"alpha-doc": "1.0"} and downloaded == []
    monkeypatch.setattr(corpus, "candidate_versions", lambda packages: {})  # no package lists: keep the cache
    assert corpus.ensure_packages(sites, tmp_path) == {"alpha-doc": "1.0"} and downloaded == []
    monkeypatch.setattr(corpus, "candidate_versions", lambda packages: {"alpha-doc": "2.0"})
    assert corpus.ensure_packages(sites, tmp_path) == {"alpha-doc": "2.0"} and downloaded == [["alpha-doc"]]
