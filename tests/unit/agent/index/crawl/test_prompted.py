"""A crawl's options from its prompt: the LLM's reply used only when valid, else the prompt's own words."""

from __future__ import annotations

import pytest

from agent.index.crawl.prompted import from_words, validated

FOLDERS = ["c3ref", "releaselog", "user-guide", "dev-guide"]


def test_the_folders_the_prompt_names_are_included_and_those_after_a_negation_excluded() -> None:
    options = from_words("only the release logs, not the c3ref API pages, at most 5 pages", "/www.sqlite.org/",
                         FOLDERS, 100)
    assert options == {"includePaths": [r"^/www\.sqlite\.org/releaselog(?:/|$)"],
                       "excludePaths": [r"^/www\.sqlite\.org/c3ref(?:/|$)"], "limit": 5}


def test_the_folder_named_best_wins_and_depth_and_paths_come_from_the_words() -> None:
    assert from_words("the user guide, 2 levels deep", "/", FOLDERS, 100) == {
        "includePaths": [r"^/user\-guide(?:/|$)"], "maxDiscoveryDepth": 2}
    assert from_words("everything under /docs/api", "/", FOLDERS, 100) == {"includePaths": ["^/docs/api(?:/|$)"]}
    assert from_words("10000 pages of anything", "/", FOLDERS, 50) == {"limit": 50}
    assert from_words("cats", "/", FOLDERS, 50) == {}


def test_an_llms_valid_options_are_kept() -> None:
    assert validated('{"includePaths": ["^/blog/"], "limit": 20, "maxDiscoveryDepth": 3}', 100) == (
        {"includePaths": ["^/blog/"], "limit": 20, "maxDiscoveryDepth": 3}, "")


@pytest.mark.parametrize("reply", ["not json", "[]", '{"includePaths": ["("]}', '{"includePaths": "^/blog"}',
                                   '{"limit": 1000}', '{"limit": true}', '{"maxDiscoveryDepth": -1}', "{}",
                                   '{"excludePaths": ["' + "a" * 300 + '"]}'])
def test_an_llms_invalid_options_are_refused_with_the_reason(reply: str) -> None:
    options, reason = validated(reply, 100)
    assert options is None and reason
