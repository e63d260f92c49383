"""The Install step of the CI workflow ``metaeval init`` writes: what exists, no guess.

Two things are decided here. Where CI gets metaeval: it is not on the package
index, so the workflow installs ``$METAEVAL_SPEC``, a pip requirement set at
its top, which defaults to what this machine's metaeval was installed from
(``direct_url.json`` of the installed distribution, PEP 610): a VCS URL at its
commit, a local checkout's ``origin`` at its commit, or the index's version.
A local directory with no remote, or a local archive, is nowhere CI can reach:
the variable is then left empty, and the step says so and stops. And how CI
installs the project: editable, with the test extras, dependency groups or
requirements files it declares. Only files are read; nothing is imported.
"""

from __future__ import annotations

import configparser
import json
import re
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from urllib.parse import unquote, urlparse

from metaeval import vcs
from metaeval.keys import cut

# Extras and groups that hold what a project's tests need, in the order they are
# preferred; "dev" only when none of the others exists (it is mostly linters).
TEST_NAMES = ("test", "tests", "testing")
DEV_NAMES = ("dev",)
REQUIREMENTS = ("requirements-test.txt", "requirements-tests.txt", "test-requirements.txt",
                "requirements/test.txt", "requirements/tests.txt")
DEV_REQUIREMENTS = ("requirements-dev.txt", "dev-requirements.txt", "requirements/dev.txt")


@dataclass(frozen=True, slots=True)
class MetaevalSpec:
    """Where CI installs metaeval from."""

    spec: str
    """A pip requirement; empty when this machine's source cannot be reached from CI."""
    origin: str
    """Where this machine's metaeval came from, said in the workflow's comment."""


def metaeval_spec(direct_url: str | None, version: str) -> MetaevalSpec:
    """The requirement for ``direct_url.json``'s text (None: installed from an index)."""
    if direct_url is None:
        return MetaevalSpec(f"metaeval=={version}", f"a package index, version {version}")
    try:
        info = json.loads(direct_url)
    except ValueError:
        info = None
    url = info.get("url") if isinstance(info, dict) else None
    if not isinstance(info, dict) or not isinstance(url, str):
        return MetaevalSpec("", "an unreadable direct_url.json")
    vcs_info = info.get("vcs_info")
    if isinstance(vcs_info, dict) and isinstance(commit := vcs_info.get("commit_id"), str):
        return MetaevalSpec(f"metaeval @ {vcs_info.get('vcs', 'git')}+{url}@{commit}",
                            f"{url} at commit {commit}")
    parsed = urlparse(url)
    if parsed.scheme == "file" and isinstance(info.get("dir_info"), dict):
        checkout = Path(unquote(parsed.path))
        remote, commit = vcs.remote_url(checkout), vcs.head_commit(checkout)
        pip_url = _pip_git_url(remote)
        if remote == vcs.UNKNOWN:
            return MetaevalSpec("", f"the local directory {checkout}, which has no remote "
                                    "'origin' CI could clone")
        if pip_url is None:
            # A clone of a clone: its origin is there, but only on this machine.
            return MetaevalSpec("", f"the local directory {checkout}, whose remote 'origin' "
                                    f"is {cut(remote, 200)!r}, a path on this machine that CI "
                                    "cannot clone")
        if commit == vcs.UNKNOWN:
            return MetaevalSpec("", f"the local directory {checkout}, whose commit git "
                                    "cannot tell")
        return MetaevalSpec(f"metaeval @ git+{pip_url}@{commit}",
                            f"a checkout of {remote} at commit {commit}")
    if parsed.scheme in ("http", "https"):
        return MetaevalSpec(f"metaeval @ {url}", url)
    return MetaevalSpec("", f"{url}, a local file CI cannot reach")


def _pip_git_url(remote: str) -> str | None:
    """``remote`` as pip's ``git+`` wants it; None for a local path (CI has none)."""
    if re.match(r"^(https?|ssh|git)://", remote):
        return remote
    scp = re.match(r"^([\w.-]+@[\w.-]+):(?!/)(.+)$", remote)  # git@github.com:org/repo.git
    if scp:
        return f"ssh://{scp.group(1)}/{scp.group(2)}"
    return None


def installed_metaeval() -> MetaevalSpec:
    """Where the metaeval running now was installed from."""
    try:
        dist = metadata.distribution("metaeval")
    except metadata.PackageNotFoundError:  # run from a source tree on sys.path
        return MetaevalSpec("", "a source tree that is not installed")
    return metaeval_spec(dist.read_text("direct_url.json"), dist.version)


@dataclass(frozen=True, slots=True)
class ProjectInstall:
    """The commands that install the project and what its tests need."""

    commands: tuple[str, ...]
    described: str
    """One line for the user: what the workflow installs."""


def _chosen(available: list[str]) -> list[str]:
    tests = [n for n in TEST_NAMES if n in available]
    return tests or [n for n in DEV_NAMES if n in available]


def _setup_cfg_extras(root: Path) -> list[str]:
    parser = configparser.ConfigParser()
    try:
        parser.read(root / "setup.cfg", encoding="utf-8")
    except (configparser.Error, UnicodeDecodeError):
        return []
    if not parser.has_section("options.extras_require"):
        return []
    return list(parser["options.extras_require"])


def project_install(root: Path, pyproject: dict[str, object]) -> ProjectInstall:
    """Install the project editable (so the tests import the code metaeval mutates,
    not a copy), with its test extras, dependency groups and requirements files."""
    project = pyproject.get("project")
    installable = (isinstance(project, dict) or "build-system" in pyproject
                   or (root / "setup.py").is_file() or (root / "setup.cfg").is_file())
    commands: list[str] = []
    said: list[str] = []
    if installable:
        optional = project.get("optional-dependencies") if isinstance(project, dict) else None
        extras = _chosen(list(optional) if isinstance(optional, dict)
                         else _setup_cfg_extras(root))
        target = f".[{','.join(extras)}]" if extras else "."
        groups = pyproject.get("dependency-groups")
        chosen_groups = _chosen(list(groups) if isinstance(groups, dict) else [])
        # --group (PEP 735) needs pip 25.1, which the step's first line installs.
        commands.append(" ".join(["pip install", *(f"--group {g}" for g in chosen_groups),
                                  f'-e "{target}"']))
        said.append(f"the project ({target}" + "".join(f", group {g}" for g in chosen_groups)
                    + ")")
    requirements = [f for f in REQUIREMENTS if (root / f).is_file()] or [
        f for f in DEV_REQUIREMENTS if (root / f).is_file()]
    if not installable and (root / "requirements.txt").is_file():
        requirements.insert(0, "requirements.txt")
    commands += [f"pip install -r {f}" for f in requirements]
    said += requirements
    if _poetry_groups(pyproject):
        said.append("not poetry's dependency groups (" + ", ".join(_poetry_groups(pyproject))
                    + "): pip cannot read them; add their install to the step")
    return ProjectInstall(tuple(commands), ", ".join(said) or "nothing of the project "
                          "(no pyproject.toml, setup.py or requirements file)")


def _poetry_groups(pyproject: dict[str, object]) -> list[str]:
    tool = pyproject.get("tool")
    poetry = tool.get("poetry") if isinstance(tool, dict) else None
    if not isinstance(poetry, dict):
        return []
    groups = poetry.get("group")
    names = list(groups) if isinstance(groups, dict) else []
    return names + (["dev-dependencies"] if "dev-dependencies" in poetry else [])
