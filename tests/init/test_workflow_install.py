"""The Install step `metaeval init` writes: metaeval from where this copy came,
the project with what its tests need, and nothing that is not declared."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

from metaeval.init.workflow_install import metaeval_spec, project_install
from tests.builders import git


def git_checkout(path: Path, remote: str | None) -> str:
    """A repository with one commit (and ``remote`` as origin); its commit."""
    path.mkdir()
    git(path, "init", "-q")
    git(path, "commit", "-q", "--allow-empty", "-m", "x")
    if remote is not None:
        git(path, "remote", "add", "origin", remote)
    return git(path, "rev-parse", "HEAD").strip()


def direct(url: str, **info: object) -> str:
    return json.dumps({"url": url, **info})


def test_from_an_index_it_pins_the_version() -> None:
    assert metaeval_spec(None, "0.3.1").spec == "metaeval==0.3.1"


def test_from_a_vcs_url_it_pins_the_commit() -> None:
    found = metaeval_spec(direct("https://example.org/team/metaeval.git",
                                 vcs_info={"vcs": "git", "commit_id": "abc123"}), "0.1")
    assert found.spec == "metaeval @ git+https://example.org/team/metaeval.git@abc123"


def test_from_a_local_checkout_it_uses_its_origin_at_its_commit(tmp_path: Path) -> None:
    https = tmp_path / "https"
    commit = git_checkout(https, "https://example.org/team/metaeval.git")
    found = metaeval_spec(direct(https.as_uri(), dir_info={"editable": True}), "0.1")
    assert found.spec == f"metaeval @ git+https://example.org/team/metaeval.git@{commit}"
    scp = tmp_path / "scp"
    commit = git_checkout(scp, "git@example.org:team/metaeval.git")
    found = metaeval_spec(direct(scp.as_uri(), dir_info={}), "0.1")
    assert found.spec == f"metaeval @ git+ssh://git@example.org/team/metaeval.git@{commit}"


def test_nowhere_ci_can_reach_leaves_the_spec_empty_and_says_why(tmp_path: Path) -> None:
    alone = tmp_path / "alone"
    git_checkout(alone, None)
    found = metaeval_spec(direct(alone.as_uri(), dir_info={"editable": True}), "0.1")
    assert (found.spec, found.origin) == (
        "", f"the local directory {alone}, which has no remote 'origin' CI could clone")
    local_remote = tmp_path / "local-remote"
    git_checkout(local_remote, str(alone))  # a path on this machine: not CI's
    found = metaeval_spec(direct(local_remote.as_uri(), dir_info={}), "0.1")
    assert (found.spec, found.origin) == (
        "", f"the local directory {local_remote}, whose remote 'origin' is {str(alone)!r}, "
            "a path on this machine that CI cannot clone")
    file_remote = tmp_path / "file-remote"
    git_checkout(file_remote, alone.as_uri())
    found = metaeval_spec(direct(file_remote.as_uri(), dir_info={}), "0.1")
    assert found.spec == "" and f"is {alone.as_uri()!r}, a path on this machine" in found.origin
    plain = tmp_path / "plain"
    plain.mkdir()
    assert metaeval_spec(direct(plain.as_uri(), dir_info={}), "0.1").spec == ""
    archive = direct((tmp_path / "metaeval-0.1.tar.gz").as_uri(), archive_info={})
    assert metaeval_spec(archive, "0.1").spec == ""
    assert metaeval_spec("{not json", "0.1").spec == ""


def install(root: Path, pyproject: str = "") -> tuple[tuple[str, ...], str]:
    got = project_install(root, tomllib.loads(pyproject))
    return got.commands, got.described


def test_the_project_is_installed_editable_with_its_test_extras(tmp_path: Path) -> None:
    config = ('[project]\nname = "shop"\n[project.optional-dependencies]\n'
              'test = ["pytest"]\ntesting = ["hypothesis"]\ndev = ["ruff"]\ndocs = ["x"]')
    assert install(tmp_path, config)[0] == ('pip install -e ".[test,testing]"',)
    dev_only = '[project]\nname = "shop"\n[project.optional-dependencies]\ndev = ["ruff"]'
    assert install(tmp_path, dev_only)[0] == ('pip install -e ".[dev]"',)
    none = '[project]\nname = "shop"\n[project.optional-dependencies]\ndocs = ["sphinx"]'
    assert install(tmp_path, none) == (('pip install -e "."',), "the project (.)")


def test_dependency_groups_and_requirements_files(tmp_path: Path) -> None:
    (tmp_path / "requirements-dev.txt").write_text("ruff\n")
    (tmp_path / "requirements").mkdir()
    (tmp_path / "requirements/test.txt").write_text("pytest\n")
    config = '[project]\nname = "shop"\n[dependency-groups]\ntest = ["pytest"]\nlint = ["r"]'
    commands, said = install(tmp_path, config)
    # requirements-dev.txt only when no test requirements file exists
    assert commands == ('pip install --group test -e "."',
                        "pip install -r requirements/test.txt")
    assert said == "the project (., group test), requirements/test.txt"
    (tmp_path / "requirements/test.txt").unlink()
    assert install(tmp_path, config)[0][1:] == ("pip install -r requirements-dev.txt",)


def test_setup_cfg_extras_and_a_project_that_is_not_installable(tmp_path: Path) -> None:
    (tmp_path / "setup.cfg").write_text("[options.extras_require]\ntests = pytest\n")
    assert install(tmp_path)[0] == ('pip install -e ".[tests]"',)
    bare = tmp_path / "bare"
    bare.mkdir()
    assert install(bare) == ((), "nothing of the project (no pyproject.toml, setup.py or "
                                 "requirements file)")
    (bare / "requirements.txt").write_text("requests\n")
    assert install(bare)[0] == ("pip install -r requirements.txt",)


def test_poetry_groups_are_named_as_not_installed(tmp_path: Path) -> None:
    config = ('[build-system]\nrequires = ["poetry-core"]\n[tool.poetry]\nname = "shop"\n'
              '[tool.poetry.group.test.dependencies]\npytest = "*"')
    commands, said = install(tmp_path, config)
    assert commands == ('pip install -e "."',)
    assert "not poetry's dependency groups (test)" in said
