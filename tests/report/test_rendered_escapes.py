"""Every report rendered from data that tries to be markup, math or a CI command.

The data carries ``<script>``, ``$\\x$``, a backtick path with a line break and
``::error::``; each test reads what a person or a runner would get (the parsed
HTML page, the Markdown's lines outside code spans, the printed lines) and checks
that none of it became an element, a heading, an image, a link, math or a
workflow command, and that the text is still there to read, escaped.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from metaeval.cli import main
from metaeval.commands import mutate_run as session
from metaeval.errors import ExitCode
from metaeval.mutation.model import MutantResult, Status
from metaeval.mutation.run.runner import MutationRun
from metaeval.report.escape import defuse, md_code, md_plain, one_line
from tests.mutation.conftest import FakeRunner, shop_here

__all__ = ["shop_here"]  # a fixture, used by name

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = "<script>alert(1)</script>"
MATH = "$\\x$"
COMMAND = "::error title=pwned::from data"
HOSTILE = f"a`b\n{COMMAND}\n# heading ![i](evil.png) [l](https://evil.example) {SCRIPT} {MATH}"
"""One text carrying everything: a backtick, line breaks, a command, Markdown, HTML, math."""
SHORT = ("a`b\n::error::x", SCRIPT, MATH, "a$b$c", "# h ![i](e.png)", "www.evil.example")
"""The same, in names short enough for a figure's tick labels."""


def invoke(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def commands_in(printed: str) -> list[str]:
    """Lines a GitHub runner would run as workflow commands (it strips leading blanks)."""
    return [line for line in printed.split("\n")
            if line.lstrip().startswith("::") or "##[" in line]


def markdown_outside_code(text: str) -> list[str]:
    """Each line of ``text`` with its code spans taken out (CommonMark's rule: a
    backtick run closes at the next run of the same length)."""
    out = []
    for line in text.split("\n"):
        kept, i = [], 0
        while i < len(line):
            if line[i] == "`":
                run = re.match(r"`+", line[i:])
                assert run is not None
                close = re.search(rf"(?<!`){run.group()}(?!`)", line[i + len(run.group()):])
                if close is None:  # an unclosed run is literal text
                    kept.append(run.group())
                    i += len(run.group())
                    continue
                i += len(run.group()) + close.end()
                continue
            kept.append(line[i])
            i += 1
        out.append("".join(kept))
    return out


def assert_markdown_inert(text: str) -> None:
    for line in markdown_outside_code(text):
        body = re.sub(r"\\.", "", line)  # backslash escapes are literal characters
        assert not line.startswith("#") or line.startswith("### "), line
        assert "![" not in body and "](" not in body, line
        assert "<" not in body and "$" not in body, line
        assert not re.search(r"https?://|www\.", body), line  # no bare URL to autolink
        assert not line.lstrip().startswith("::"), line


class Elements(HTMLParser):
    """The elements of a page and its text, as a browser's parser sees them."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parsed(html: str) -> Elements:
    page = Elements()
    page.feed(html)
    return page


# --- the escapers, each with a case where it must leave text alone -------------------


def test_one_line_escapes_every_break_and_control_but_not_plain_text() -> None:
    assert one_line("a\nb\r\x1b[31m\u2028\u202e") == "a\\nb\\r\\x1b[31m\\u2028\\u202e"
    assert one_line("plain: text, ünïcode → ok") == "plain: text, ünïcode → ok"


def test_defuse_stops_workflow_commands_and_keeps_every_other_line() -> None:
    assert defuse(f"ok\n  {COMMAND}\n##[warning]x") == (
        "ok\n  \\x3a:error title=pwned::from data\n#\\x23[warning]x")
    ours = "status    mutants\n--------  ---------\nKilled    1\n  a::b"
    assert defuse(ours) == ours


def test_markdown_code_span_fence_is_longer_than_any_run_inside() -> None:
    assert md_code("a``b") == "```a``b```"
    assert md_code("`x`") == "`` `x` ``"
    assert md_code("one\ntwo") == "`one\\ntwo`"
    assert md_code("plain") == "`plain`"


def test_markdown_prose_puts_links_in_code_and_escapes_markup() -> None:
    assert md_plain("see https://evil.example/a.png now") == (
        "see `https://evil.example/a.png` now")
    assert md_plain("ping @team") == "ping `@team`"
    assert md_plain("![i](x) <b> $m$ # h") == "\\!\\[i\\](x) \\<b\\> \\$m\\$ \\# h"
    assert md_plain("TNR 0.600 below the bar") == "TNR 0.600 below the bar"


# --- meta-eval: table, --html, --summary ----------------------------------------------


def hostile_meta_set(tmp_path: Path) -> Path:
    """The repository's meta-set with each check renamed to carry hostile text."""
    names: dict[str, str] = {}
    lines = []
    for text in (ROOT / "meta_sets" / "support_agent.jsonl").read_text().splitlines():
        run = json.loads(text)
        for check in run["task"]["checks"]:
            was = check.get("name", check["grader"])
            n = names.setdefault(was, f"{SHORT[len(names) % len(SHORT)]} {len(names)}")
            check["name"] = n
        criteria = run["label"].get("criteria", {})
        run["label"]["criteria"] = {names[k]: v for k, v in criteria.items()}
        run["category"] = f"{COMMAND} {SCRIPT}"
        lines.append(json.dumps(run))
    path = tmp_path / "hostile.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_meta_eval_renders_hostile_check_names_as_text(tmp_path: Path) -> None:
    meta_set = hostile_meta_set(tmp_path)
    page, summary = tmp_path / "meta.html", tmp_path / "summary.md"
    done = invoke("meta-eval", str(meta_set), "--resamples", "20", "--html", str(page),
                  "--summary", str(summary))
    assert done.exit_code == ExitCode.OK, done.output
    assert commands_in(done.stdout) == [] and commands_in(done.stderr) == []
    assert "a`b\\n::error::x 0" in done.stdout
    html = page.read_text(encoding="utf-8")
    elements = parsed(html)
    assert "script" not in elements.tags
    text = "".join(elements.text)
    assert SCRIPT in text and "a$b$c 3" in text and f"{MATH} 2" in text  # as written
    assert "a$b$c 3</text>" in html and f"{MATH} 2</text>" in html  # the figure's text
    assert_markdown_inert(summary.read_text(encoding="utf-8"))


# --- judge-audit: table, --html, --summary --------------------------------------------


def hostile_items(tmp_path: Path) -> Path:
    out = []
    for name in ("pointwise", "length", "position", "injection"):
        for n, text in enumerate((ROOT / "meta_sets" / "judge" / f"{name}.ndjson")
                                 .read_text().splitlines()):
            item = json.loads(text)
            item["id"] = f"{HOSTILE} {name} {n}"
            item["prompt"] = f"{MATH} a$b$c {SCRIPT} {COMMAND}"
            out.append(json.dumps(item))
    path = tmp_path / "items.ndjson"
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return path


def test_judge_audit_renders_hostile_items_as_text(tmp_path: Path) -> None:
    items = hostile_items(tmp_path)
    page, summary = tmp_path / "audit.html", tmp_path / "summary.md"
    done = invoke("judge-audit", "--judge", "steady", "--no-cache", "--items", str(items),
                  "--html", str(page), "--summary", str(summary),
                  "--tpr-bar", "0", "--tnr-bar", "0")  # its few items cannot decide 0.8
    assert done.exit_code == ExitCode.OK, done.output
    assert commands_in(done.stdout) == [] and commands_in(done.stderr) == []
    html = page.read_text(encoding="utf-8")
    elements = parsed(html)
    assert "script" not in elements.tags
    assert f"{MATH} a$b$c &lt;script&gt;" in html  # the length figure's item titles
    assert_markdown_inert(summary.read_text(encoding="utf-8"))


# --- mutate: table, --summary; findings list and show ---------------------------------

SOURCE = '''def gate(quantity, limit):
    """
::error title=from source::a line of the file, shown in the diff
    """
    if quantity > limit:
        return limit
    return quantity
'''
FILE_NAME = "odd`name\n::error title=pwned::x\n# h ![i](evil.png) <script> $\\x$.py"


class EverySurvives(FakeRunner):
    def __call__(self, mutants, options, progress=None, cache=None,  # type: ignore[no-untyped-def]
                 warm=None, execute=None) -> MutationRun:
        run = super().__call__(mutants, options, progress, cache, warm, execute)
        return MutationRun(tuple(MutantResult(r.mutant, Status.SURVIVED, duration=0.1)
                                 for r in run.results), 1.0, 4.0)


def test_mutate_and_findings_render_a_hostile_file_name_as_text(
        shop_here: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (shop_here / "shop" / FILE_NAME).write_text(SOURCE, encoding="utf-8")
    monkeypatch.setattr(session, "run_mutants", EverySurvives())
    target = f"shop/{FILE_NAME}"
    done = invoke("mutate", target, "--mutants", "no_patches", "--no-cache",
                  "--summary", "summary.md")
    assert done.exit_code == ExitCode.FINDINGS, done.output
    assert commands_in(done.stdout) == [] and commands_in(done.stderr) == []
    header = next(line for line in done.stdout.splitlines() if line.startswith("Survived: "))
    assert "odd`name\\n::error title=pwned::x\\n# h" in header  # the path, on its own line
    assert_markdown_inert((shop_here / "summary.md").read_text(encoding="utf-8"))
    recorded = invoke("mutate", target, "--mutants", "no_patches", "--no-cache",
                      "--baseline", "findings.json", "--update-baseline")
    assert recorded.exit_code == ExitCode.OK, recorded.output
    assert commands_in(recorded.stdout) == []
    listed = invoke("findings", "list", "--file", "findings.json")
    assert listed.exit_code == ExitCode.FINDINGS, listed.output
    assert commands_in(listed.stdout) == []
    assert "odd`name\\n::error" in listed.stdout
    fingerprint = json.loads((shop_here / "findings.json").read_text())["findings"][0][
        "fingerprint"]
    shown = invoke("findings", "show", fingerprint, "--file", "findings.json")
    assert shown.exit_code == ExitCode.OK, shown.output
    assert commands_in(shown.stdout) == []
    assert " \\x3a:error title=from source::a line" in shown.stdout  # the diff's context
    gate = invoke("mutate", target, "--mutants", "no_patches", "--no-cache",
                  "--baseline", "findings.json", "--summary", "known.md")
    assert commands_in(gate.stdout) == []
    assert_markdown_inert((shop_here / "known.md").read_text(encoding="utf-8"))
