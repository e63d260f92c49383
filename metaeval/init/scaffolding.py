"""``metaeval init``: scaffold metaeval into a user's repository.

It adds an example patch mutant against the user's own package that stays
Ignored until edited (``mutants/``), an example labelled meta-set
(``meta_sets/``), the test that holds the graders to it, ``[tool.metaeval]`` in
``pyproject.toml`` with the package as the mutate target, and a CI workflow that
installs what the project declares: one job, or (``shards``) a baseline job, a
matrix of shards and a merge job that gates; when the project configures judges
(``[tool.metaeval.judges]``), the workflow audits each and runs ``metaeval gate``
over the results, so a judge that may not gate fails the check. It is
idempotent, and it never overwrites a file without ``force``; the user's
``pyproject.toml`` is only ever appended to, and never when it already has a
``[tool.metaeval]`` table (whose ``allowed_modules`` it checks for the package).
``.gitignore`` gets metaeval's caches, reports and SARIF file. Every file is
rendered before the first is written, so an error (no package found) writes
nothing.
"""

from __future__ import annotations

import errno
import json
import re
import stat
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from functools import cached_property
from importlib import resources
from pathlib import Path

from metaeval.data_paths import SOURCE_LIMIT, kind_of, read_bounded
from metaeval.errors import InputError, OutputError
from metaeval.files import write_atomic
from metaeval.init.project_package import Package, find_packages, first_function
from metaeval.init.workflow_install import installed_metaeval, project_install
from metaeval.keys import cut

# (where in the user's repository, which scaffold file)
FILES = (
    ("mutants/example.py", "mutants/example.py"),
    ("meta_sets/example.jsonl", "meta_sets/example.jsonl"),
    ("tests/test_metaeval_graders.py", "tests/test_metaeval_graders.py"),
    (".github/workflows/metaeval.yml", "workflows/metaeval.yml"),
)
PYPROJECT_SECTION = "pyproject_section.toml"
WORKFLOW = "workflows/metaeval.yml"
SHARDED_WORKFLOW = "workflows/metaeval-shards.yml"
MAX_SHARDS = 256
"""A GitHub Actions matrix runs at most 256 jobs."""
# A judge name goes into the workflow's YAML, a shell command and a file name; a
# key's environment variable into a secret's name. Anything else is left out.
_JUDGE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,99}")


class Action(Enum):
    """What init did with one file."""

    CREATED = "created"
    """The file did not exist."""
    OVERWRITTEN = "overwritten"
    """The file existed and ``--force`` replaced it."""
    KEPT = "kept"
    """The file exists (or already has ``[tool.metaeval]``); left as it is."""
    APPENDED = "appended"
    """``[tool.metaeval]`` was added to the end of an existing ``pyproject.toml``."""


@dataclass(frozen=True, slots=True)
class Step:
    path: str
    action: Action


@dataclass(frozen=True, slots=True)
class Scaffolded:
    """What init did: one Step per file, in a stable order, and what to tell the user."""

    steps: tuple[Step, ...]
    notes: tuple[str, ...]


def _template(name: str) -> str:
    return resources.files("metaeval").joinpath("scaffold", name).read_text(encoding="utf-8")


def _render(name: str, values: dict[str, str]) -> str:
    text = _template(name)
    for key, value in values.items():
        text = text.replace(f"@@{key}@@", value)
    assert "@@" not in text, f"scaffold/{name}: a placeholder is left"
    return text


# The oldest Python metaeval runs on; a project that needs a newer one gets that.
PYTHON_MINOR = 11


class _Project:
    """What the templates need to know of the project, found only when a file that
    needs it is written (a rerun that keeps every file needs no package)."""

    def __init__(self, root: Path, pyproject: dict[str, object], package: str | None,
                 shards: int | None = None) -> None:
        self.root, self.pyproject, self.package = root, pyproject, package
        self.shards = shards
        self.notes: list[str] = []

    @cached_property
    def packages(self) -> tuple[Package, ...]:
        found = find_packages(self.root, self.pyproject, self.package)
        self.notes.append("package: " + ", ".join(f"{p.name} ({p.path})" for p in found))
        return found

    def mutants(self) -> str:
        package = self.packages[0]
        target = first_function(self.root, package) or f"{package.name}:your_function"
        return _render("mutants/example.py", {"TARGET": json.dumps(target)})

    def section(self) -> str:
        targets = ", ".join(json.dumps(p.path) for p in self.packages)
        names = ", ".join(json.dumps(p.name) for p in self.packages)
        return _render(PYPROJECT_SECTION, {"TARGETS": targets, "PACKAGES": names})

    def allowed_in(self, section: object) -> None:
        """A ``[tool.metaeval]`` of the user's own is kept as written: when its
        ``allowed_modules`` leaves out the package found, say so, since a meta-set
        naming the team's graders is refused line by line until it is there."""
        try:  # not self.packages: a rerun that keeps every file says nothing of them
            names = [p.name for p in find_packages(self.root, self.pyproject, self.package)]
        except InputError:
            return  # no package found: nothing to say, and nothing else needs one
        value = section.get("allowed_modules", []) if isinstance(section, dict) else []
        allowed = [v for v in value if isinstance(v, str)] if isinstance(value, list) else []
        missing = [n for n in names
                   if not any(n == a or n.startswith(a + ".") for a in allowed)]
        if missing:
            self.notes.append(
                f"warning: pyproject.toml: [tool.metaeval] allowed_modules does not name "
                f"{', '.join(map(repr, missing))}: a check naming your own grader "
                "(\"package.module:factory\") is refused until it does; kept as you wrote "
                f"it: add {json.dumps([*allowed, *missing])}")

    def workflow(self) -> str:
        metaeval = installed_metaeval()
        install = project_install(self.root, self.pyproject)
        self.notes.append(f"workflow: installs {install.described}")
        if not metaeval.spec:
            self.notes.append(f"warning: workflow: METAEVAL_SPEC is empty: metaeval was "
                              f"installed from {metaeval.origin}; set it at the top of "
                              ".github/workflows/metaeval.yml to where CI can install "
                              "metaeval from")
        else:
            self.notes.append(f"workflow: installs {metaeval.spec}")
        sharded: dict[str, str] = {}
        if self.shards is not None:
            self.notes.append(f"workflow: a baseline job, {self.shards} shards, a merge that "
                              "gates")
            sharded = {"SHARDS": str(self.shards),
                       "MATRIX": json.dumps(list(range(1, self.shards + 1)))}
        return _render(WORKFLOW if self.shards is None else SHARDED_WORKFLOW, {
            **sharded,
            "JUDGE_STEPS": self._judge_steps(),
            "METAEVAL_SPEC": json.dumps(metaeval.spec),
            "METAEVAL_ORIGIN": metaeval.origin,
            "PYTHON": f"3.{self._python_minor()}",
            "INSTALL": "\n".join(" " * 10 + c for c in install.commands)
                       or " " * 10 + "# nothing of the project to install",
        })

    def _judges(self) -> list[tuple[str, str]]:
        """The names of ``[tool.metaeval.judges]`` the workflow can audit, each with the
        environment variable of its API key ("" when it names none)."""
        tool = self.pyproject.get("tool")
        section = tool.get("metaeval") if isinstance(tool, dict) else None
        judges = section.get("judges") if isinstance(section, dict) else None
        found = []
        for name, table in sorted(judges.items()) if isinstance(judges, dict) else []:
            if not _JUDGE_NAME.fullmatch(name):
                self.notes.append(f"warning: workflow: judge {cut(name)!r} left out: expected "
                                  "a name of letters, digits, '_', '.' and '-'")
                continue
            key = table.get("api_key_env", "") if isinstance(table, dict) else ""
            if not isinstance(key, str) or (key and not _ENV_NAME.fullmatch(key)):
                self.notes.append(f"warning: workflow: judge {name!r}: api_key_env "
                                  f"{cut(repr(key))} is no environment variable name; its "
                                  "step is given no key")
                key = ""
            found.append((name, key))
        return found

    def _judge_steps(self) -> str:
        """A judge-audit step per configured judge, then a gate over the results."""
        judges = self._judges()
        if not judges:
            return ""
        self.notes.append("workflow: judge-audit of " + ", ".join(n for n, _ in judges)
                          + ", then metaeval gate over the results")
        steps = []
        for name, key in judges:
            env = (f"        env:\n          {key}: ${{{{ secrets.{key} }}}}\n" if key else "")
            steps.append(
                f"      - name: May the judge gate? ({name})\n"
                "        if: always()\n"
                "        # Exit 1 (report only) is failed by the gate below, naming why; 2 and 3\n"
                "        # (bad input, a void audit) fail here.\n"
                f"{env}"
                "        run: mkdir -p metaeval-reports && metaeval judge-audit --judge "
                f"{name} --format json --html metaeval-reports/judge-audit-{name}.html "
                '--summary "$GITHUB_STEP_SUMMARY" > '
                f"metaeval-reports/judge-audit-{name}.json || [ $? -eq 1 ]\n")
        steps.append(
            "      - name: Release bars\n"
            "        if: always()\n"
            "        # [tool.metaeval.gate]'s bars, and every judge held to its audit's verdict.\n"
            "        run: |\n"
            "          mkdir -p metaeval-reports\n"
            "          metaeval meta-eval --format json > metaeval-reports/meta-eval.json "
            "|| [ $? -eq 1 ]\n"
            "          metaeval gate metaeval-reports/meta-eval.json "
            'metaeval-reports/judge-audit-*.json --summary "$GITHUB_STEP_SUMMARY"\n')
        return "".join(steps)

    def _python_minor(self) -> int:
        project = self.pyproject.get("project")
        requires = project.get("requires-python", "") if isinstance(project, dict) else ""
        # At most three digits: int() of 5,000 is a ValueError (and no Python is 3.1000).
        found = re.search(r">=?\s*3\.(\d{1,3})(?!\d)",
                          requires if isinstance(requires, str) else "")
        return max(PYTHON_MINOR, int(found.group(1))) if found else PYTHON_MINOR


def _read_text(path: Path) -> str | None:
    """The text of a file init reads (pyproject.toml, .gitignore), None when there is
    none: a regular file of at most ``SOURCE_LIMIT`` bytes, links followed, UTF-8; a
    folder, a fifo (never waited on), a device or a file that is not UTF-8 is an
    ``InputError``, raised before init writes anything."""
    if not path.exists() and not path.is_symlink():
        return None
    try:
        data = read_bounded(path.resolve(), SOURCE_LIMIT, str(path))
    except OSError as e:
        raise InputError(f"{path}: cannot read: {e.strerror or e}") from e
    except (RuntimeError, ValueError) as e:  # a link loop
        raise InputError(f"{path}: cannot read: {e}") from e
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise InputError(f"{path}:{line}: not UTF-8 (byte {data[e.start]:#04x}); expected a "
                         "UTF-8 text file; nothing was written") from e


def _toml(path: Path, text: str) -> dict[str, object]:
    try:
        return tomllib.loads(text)
    # ValueError: not TOML, or a number of more than 4,300 digits (tomllib lets
    # int()'s error through); RecursionError: arrays or tables nested too deep.
    except (ValueError, RecursionError) as e:
        reason = "nested too deep" if isinstance(e, RecursionError) else cut(str(e), 120)
        raise InputError(f"{path}: not valid TOML ({reason}); fix it before metaeval init "
                         "adds [tool.metaeval]") from e


def _pyproject(root: Path) -> tuple[str, dict[str, object]] | None:
    """The text and the tables of ``root/pyproject.toml``; None when there is none."""
    path = root / "pyproject.toml"
    text = _read_text(path)
    return None if text is None else (text, _toml(path, text))


# One file to write: where, its text, and what writing it is.
_Write = tuple[Path, str, Step]


def _pyproject_write(root: Path, existing: tuple[str, dict[str, object]] | None,
                     project: _Project) -> _Write | Step:
    path = root / "pyproject.toml"
    if existing is None:
        return path, project.section().lstrip("\n"), Step("pyproject.toml", Action.CREATED)
    text, data = existing
    tool = data.get("tool")
    if isinstance(tool, dict) and "metaeval" in tool:
        project.allowed_in(tool["metaeval"])
        return Step("pyproject.toml", Action.KEPT)
    if tool is not None and not isinstance(tool, dict):
        raise InputError(f"{path}: tool: got {cut(repr(tool), 80)}; expected a table, to "
                         "which metaeval init adds [tool.metaeval]; nothing was written")
    after = text + ("" if text.endswith("\n") else "\n") + project.section()
    try:
        # The file as it would be, read back first: ``tool = { black = {...} }`` (an
        # inline table) cannot take a [tool.metaeval] table after it.
        tomllib.loads(after)
    except (ValueError, RecursionError) as e:
        raise InputError(f"{path}: [tool.metaeval] cannot be appended: the file would no "
                         f"longer be TOML ({cut(str(e), 120)}); is `tool` an inline table? "
                         "Write it as [tool.NAME] tables; nothing was written") from e
    return path, after, Step("pyproject.toml", Action.APPENDED)


def scaffold(root: Path, *, force: bool = False, package: str | None = None,
             shards: int | None = None) -> Scaffolded:
    """Add the scaffold under ``root``. ``package`` is the import name of the user's
    package (``--package``); None: found from pyproject.toml or the layout.
    ``shards``: the workflow splits mutation testing over that many shards (2 to
    ``MAX_SHARDS``; ``--shards``); None: one job."""
    if not root.is_dir():
        raise InputError(f"{root}: no such directory; expected the repository to scaffold")
    if shards is not None and not 2 <= shards <= MAX_SHARDS:
        raise InputError(f"--shards: got {shards!r}; expected 2 to {MAX_SHARDS} (a GitHub "
                         "Actions matrix runs at most 256 jobs; one job needs no --shards)")
    existing = _pyproject(root)
    project = _Project(root, existing[1] if existing else {}, package, shards)
    renderers: dict[str, Callable[[], str]] = {
        "mutants/example.py": project.mutants,
        WORKFLOW: project.workflow,
    }
    planned: list[_Write | Step] = []
    for target, name in FILES:
        path = root / target
        existed = path.exists()
        if existed and not force:
            planned.append(Step(target, Action.KEPT))
            continue
        text = renderers[name]() if name in renderers else _template(name)
        planned.append((path, text, Step(target, Action.OVERWRITTEN if existed
                                         else Action.CREATED)))
    planned.append(_pyproject_write(root, existing, project))
    planned.append(_gitignore(root))
    for item in planned:  # every file it will touch, checked before one is written
        if not isinstance(item, Step):
            _writable(item[0])
    steps = []
    for item in planned:  # every text rendered and checked: only now is anything written
        if isinstance(item, Step):
            steps.append(item)
        else:
            write_atomic(item[0], item[1], follow_links=True, links_in_repository=True)
            steps.append(item[2])
    return Scaffolded(tuple(steps), tuple(project.notes))


def _writable(path: Path) -> None:
    """Refuse a target that exists and is no regular file (a folder, a fifo, a
    device, links followed), or that sits under a file, before init writes any."""
    # The errors write_atomic would give, raised before the first file is written.
    for above in reversed(path.parents):
        if above.exists() and not above.is_dir():
            raise OutputError(path, NotADirectoryError(errno.ENOTDIR,
                                                       f"{above} is not a directory"))
    try:
        info = path.stat()
    except OSError:
        return
    if not stat.S_ISREG(info.st_mode):
        raise OutputError(path, OSError(None, f"it is {kind_of(info.st_mode)}; expected a "
                                        "regular file or none, refusing to replace it"))


IGNORED = (".metaeval/", "metaeval-reports/", "metaeval.sarif")
"""What metaeval writes into a repository and no commit should carry: its caches, the
reports the workflow uploads, and the SARIF file it sends to code scanning."""


def _ignores(line: str, entry: str) -> bool:
    """Whether a .gitignore line already ignores ``entry`` as written (with or without
    the leading or trailing slash); a pattern of the user's is not interpreted."""
    return line.strip().strip("/") == entry.strip("/")


def _gitignore(root: Path) -> _Write | Step:
    """metaeval's caches, reports and SARIF file: keep them out of commits. Each entry
    is appended once; a file that has them all is kept as it is."""
    path = root / ".gitignore"
    text = _read_text(path) or ""
    lines = text.splitlines()
    missing = [e for e in IGNORED if not any(_ignores(line, e) for line in lines)]
    if not missing:
        return Step(".gitignore", Action.KEPT)
    return (path, text + ("" if not text or text.endswith("\n") else "\n")
            + "".join(f"{e}\n" for e in missing),
            Step(".gitignore", Action.APPENDED if text else Action.CREATED))
