"""The docs say what the CLI does: every command and flag in ``--help`` is on its
command's page, every link between the pages resolves, and (slow) the README's quick
start and each command page's first example run as written."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest

from metaeval.cli import main
from tests.scaffold_project import make_shop

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"

PAGE_OF = {"findings": "findings.md", "judge-import-llmbar": "judge-audit.md",
           "judge-import": "judge-own.md", "judge-import annotations": "judge-audit.md",
           "import": "import/index.md"}
"""A command documented on another command's page; the rest have ``docs/NAME.md``."""


def commands(group: click.Group = main, path: tuple[str, ...] = ()
             ) -> list[tuple[tuple[str, ...], click.Command]]:
    found: list[tuple[tuple[str, ...], click.Command]] = []
    for name, command in sorted(group.commands.items()):
        if isinstance(command, click.Group):
            found += commands(command, (*path, name))
        else:
            found.append(((*path, name), command))
    return found


def page_for(path: tuple[str, ...]) -> Path:
    return DOCS / PAGE_OF.get(" ".join(path), PAGE_OF.get(path[0], f"{path[0]}.md"))


def long_flags(command: click.Command) -> list[str]:
    return [flag for param in command.params if isinstance(param, click.Option)
            for flag in (*param.opts, *param.secondary_opts) if flag.startswith("--")]


def mentions(text: str, word: str) -> bool:
    """``word`` as a whole token: ``--cache`` is not found in ``--cache-dir``."""
    return re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", text) is not None


@pytest.mark.parametrize("path", [p for p, _ in commands()], ids=" ".join)
def test_every_flag_of_a_command_is_on_its_page(path: tuple[str, ...]) -> None:
    command = dict(commands())[path]
    text = page_for(path).read_text(encoding="utf-8")
    assert mentions(text, f"metaeval {' '.join(path)}"), f"{page_for(path).name} never names it"
    missing = [flag for flag in long_flags(command) if not mentions(text, flag)]
    assert not missing, f"{page_for(path).name} does not document {missing}"


def test_the_flag_check_can_fail() -> None:
    assert mentions("use `--cache PATH`", "--cache")
    assert not mentions("use `--cache-dir PATH`", "--cache")
    assert not mentions("metaeval mutated", "metaeval mutate")


def test_every_page_is_linked_from_the_readme() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    unlinked = [p.name for p in sorted(DOCS.glob("*.md")) if f"](docs/{p.name}" not in readme]
    assert not unlinked


def anchors(text: str) -> set[str]:
    """The anchors a forge makes of a page's headings."""
    found = set()
    for heading in re.findall(r"^#+ (.+)$", text, flags=re.MULTILINE):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        found.add(slug)
    return found


def test_every_relative_link_resolves() -> None:
    broken = []
    for page in [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]:
        text = page.read_text(encoding="utf-8")
        # Links inside code blocks are not links.
        prose = re.sub(r"```.*?```", "", text, flags=re.DOTALL)
        for target in re.findall(r"\]\(([^)\s]+)\)", prose):
            if re.match(r"[a-z]+:", target):
                continue
            file, _, anchor = target.partition("#")
            linked = (page.parent / file).resolve() if file else page
            if not linked.exists():
                broken.append(f"{page.name}: {target}")
            elif anchor and linked.suffix == ".md" and anchor not in anchors(
                    linked.read_text(encoding="utf-8")):
                broken.append(f"{page.name}: {target} (no such heading)")
    assert not broken


def test_the_anchor_rule_is_the_forges() -> None:
    assert anchors("## Built-in graders\n### `[tool.metaeval]` keys") == {
        "built-in-graders", "toolmetaeval-keys"}


# The examples. Each runs in a copy, never in this checkout: metaeval writes its cache
# and the examples write files. A command may find something (exit 1); it may not
# fail (exit 2 or 3).

LEFT_TO_CI = "metaeval mutate"
"""The whole self-hosting run: ``.ci/run`` runs it verbatim as its last step, and
running it twice more here would double the slowest part of CI."""


def first_example(page: Path) -> list[str]:
    """The commands of the page's first ``console`` block that has a command not
    left to CI, in order."""
    for block in re.findall(r"```console\n(.*?)```", page.read_text(encoding="utf-8"),
                            re.DOTALL):
        lines = [line[2:] for line in block.splitlines() if line.startswith("$ ")]
        if [line for line in lines if line != LEFT_TO_CI]:
            return lines
    raise AssertionError(f"{page.name} has no console example")


def readme_quick_start() -> list[str]:
    """The metaeval part of the README's first set-up command."""
    line = next(line for line in (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
                if "pip install '.[dev]'" in line)
    return [part.strip() for part in line.split("&&") if part.strip().startswith("metaeval ")]


def copy_of_this_repository(into: Path) -> Path:
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True,
                           check=True).stdout.decode().split("\0")
    for name in filter(None, files):
        source = ROOT / name
        if source.is_file():
            (into / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, into / name)
    return into


def run_commands(lines: list[str], cwd: Path, pythonpath: Path | None = None) -> None:
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)  # the copy's metaeval, not this checkout's
    for line in lines:
        if line == LEFT_TO_CI and pythonpath is not None:
            continue
        done = subprocess.run(["bash", "-c", line], cwd=cwd, env=env, capture_output=True,
                              text=True, timeout=900)
        # 4: an inconclusive audit, measured like 1 (a judge on too few labels)
        assert done.returncode in (0, 1, 4), \
            f"{line}: exit {done.returncode}\n{done.stderr[-2000:]}"


SHOP_PAGES = ("init.md", "findings.md")
"""Pages whose example is a user's small project, not this repository."""
SHARED_DATA_PAGES = ("judge-own.md", "judge-mutants.md")
"""Pages whose examples read published logs kept in ``../shared/data`` (never copied
into the repository): tests/importers/test_judge_logs_real.py and
tests/audit/test_judge_mutants_real_data.py run those commands on the same files,
skipping without them."""
SERVER_PAGES = ("label.md",)
"""Pages whose example starts a server that runs until stopped: the browser tests
(tests/label/test_label_browser.py) start it, label through it and stop it."""


@pytest.mark.slow
def test_the_readme_quick_start_and_each_pages_first_example_run(tmp_path: Path) -> None:
    repo = copy_of_this_repository(tmp_path / "repo")
    run_commands(readme_quick_start(), repo, pythonpath=repo)
    for page in sorted(DOCS.glob("*.md")):
        if (not any(page == page_for(path) for path, _ in commands())
                or page.name in SHOP_PAGES + SHARED_DATA_PAGES + SERVER_PAGES):
            continue
        run_commands(first_example(page), repo, pythonpath=repo)
    for name in SHOP_PAGES:
        shop = tmp_path / name.removesuffix(".md")
        make_shop(shop)
        subprocess.run(["git", "init", "-q"], cwd=shop, check=True)
        if name != "init.md":
            run_commands(["metaeval init"], shop)
        run_commands(first_example(DOCS / name), shop)
