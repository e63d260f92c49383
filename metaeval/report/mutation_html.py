"""The mutation report as one HTML file that opens offline: the standard viewer.

The page is the ``mutation-testing-elements`` web component (the report viewer
Stryker and others use) with its published browser bundle inlined, and the
mutation-testing-report-schema JSON bound to it, so every mutant shows inline in
its source with its status, operator, killing tests and description. The bundle
is shipped unmodified under ``vendor/`` with its licence and a SOURCE note (name,
version, registry URL, sha256); this module only reads it. ``findings_report``
turns the tracked findings into the same schema, for ``findings export --html``.

Rendering only: nothing here runs a mutant or reads anything but the bundle and,
for findings, the source files they point at, and only those inside the
repository (``data_paths``): a findings file is data from a branch.
"""

from __future__ import annotations

import datetime as dt
import json
from importlib import resources
from pathlib import Path

from metaeval.contract import JsonObject, JsonValue
from metaeval.data_paths import SOURCE_LIMIT, inside_root, read_bounded
from metaeval.mutation.findings_file import FindingEntry, Findings, FindingStatus
from metaeval.report.mutation import SCHEMA_VERSION, THRESHOLDS

BUNDLE_DIR = "vendor/mutation-testing-elements"
BUNDLE_FILE = "mutation-test-elements.js"


def bundle() -> str:
    """The component's published browser bundle, as shipped (see its SOURCE note)."""
    path = resources.files("metaeval.report").joinpath(BUNDLE_DIR).joinpath(BUNDLE_FILE)
    return path.read_text(encoding="utf-8")


def script_json(value: JsonValue) -> str:
    """``value`` as a JavaScript literal safe inside a ``<script>`` element: a file
    name or diff holding ``</script>`` or ``<!--`` cannot end or bend the element."""
    text = json.dumps(value, sort_keys=True, ensure_ascii=True)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _attribute(text: str) -> str:
    return (text.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")
            .replace(">", "&gt;"))


def mutation_html(report: JsonObject, title: str = "metaeval mutation report") -> str:
    """One self-contained page showing ``report`` (mutation-testing-report-schema).

    The bundle is inlined as it was published; it holds no ``</script``, which
    the tests check, so it cannot end its own element early.
    """
    code = bundle()
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{_attribute(title)}</title>
<script>{code}</script>
</head>
<body>
<mutation-test-report-app title-postfix="{_attribute(title)}"></mutation-test-report-app>
<script>
const app = document.querySelector("mutation-test-report-app");
app.report = {script_json(report)};
function updateTheme() {{ document.body.style.backgroundColor = app.themeBackgroundColor; }}
app.addEventListener("theme-changed", updateTheme);
updateTheme();
</script>
</body>
</html>
"""


# --- tracked findings as a report ----------------------------------------------------


def _change(diff: str, line: int) -> tuple[int, list[str], list[str]]:
    """From a unified diff: the first line removed (in the old file), the removed
    lines and the added lines of its first change; ``line`` when none is found."""
    old = line
    start: int | None = None
    removed: list[str] = []
    added: list[str] = []
    for text in diff.splitlines():
        if text.startswith(("---", "+++")):
            continue
        if text.startswith("@@"):
            if start is not None:
                break
            try:
                old = int(text.split()[1].lstrip("-").split(",")[0])
            except (IndexError, ValueError):
                old = line
            continue
        if text.startswith("-"):
            start = old if start is None else start
            removed.append(text[1:])
            old += 1
        elif text.startswith("+"):
            start = old if start is None else start
            added.append(text[1:])
        elif start is not None:
            break
        else:
            old += 1
    return (line if start is None else start), removed, added


def _finding_mutant(e: FindingEntry, today: dt.date, lines: list[str]) -> JsonObject:
    start, removed, added = _change(e.diff, e.line)
    if not 1 <= start <= len(lines) or start + len(removed) - 1 > len(lines):
        start = min(max(e.line, 1), max(len(lines), 1))
        removed = lines[start - 1:start]
    end = start + max(len(removed), 1) - 1
    end_column = len(removed[-1]) + 1 if removed else 1
    replacement = "\n".join(added) + ("" if removed or not added else "\n")
    accepted = e.effective_status(today) is FindingStatus.ACCEPTED
    mutant: JsonObject = {
        "id": e.fingerprint[:12], "mutatorName": e.rule,
        "location": {"start": {"line": start, "column": 1},
                     "end": {"line": end, "column": end_column}},
        "status": "Ignored" if accepted else e.mutant_status,
        "replacement": replacement,
        "description": e.breaks or f"{e.mutant_id} in {e.qualname}",
    }
    if accepted:
        until = f" until {e.until}" if e.until else ""
        mutant["statusReason"] = f"accepted by {e.accepted_by}{until}: {e.reason}"
    elif e.expired(today):
        mutant["statusReason"] = f"accepted until {e.until}, expired: {e.reason}"
    return mutant


def _source(root: Path, name: str, where: str) -> str:
    """The text of the source file a finding names, "" when there is none: the name
    comes from a findings file (data), so it must lead to a regular file inside
    ``root`` of bounded size, else an ``InputError`` naming ``where``; its text
    goes into the page, so nothing outside the repository may reach it."""
    try:
        data = read_bounded(inside_root(root, name, where), SOURCE_LIMIT, where)
    except OSError:
        return ""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return ""


def findings_report(findings: Findings, root: Path, today: dt.date,
                    where: str = "findings") -> JsonObject:
    """The tracked findings as a mutation-testing-report-schema document: an open
    finding shows with its mutant's status, an accepted one as Ignored with who
    accepted it and why. A source file that cannot be read is shown as the lines
    the finding's diff removed, so the finding still has a place to sit. ``where``
    names the findings file in errors: a path leading out of ``root`` (by a
    symbolic link), to a file that is not regular or past ``SOURCE_LIMIT`` is an
    ``InputError``."""
    files: dict[str, JsonValue] = {}
    sources: dict[str, list[str]] = {}
    for e in findings.entries:
        if e.path not in sources:  # entries are sorted: named by fingerprint, not index
            source = _source(root, e.path, f"{where}: finding {e.fingerprint[:12]}: path")
            sources[e.path] = source.splitlines()
            files[e.path] = {"language": "python", "source": source, "mutants": []}
        lines = sources[e.path]
        entry = files[e.path]
        assert isinstance(entry, dict)
        if not lines:  # the file is gone: its removed lines stand in for it
            _, removed, _ = _change(e.diff, e.line)
            lines = removed or [""]
            entry["source"] = "\n".join(lines) + "\n"
            sources[e.path] = lines
        mutants = entry["mutants"]
        assert isinstance(mutants, list)
        mutants.append(_finding_mutant(e, today, lines))
    return {"schemaVersion": SCHEMA_VERSION, "thresholds": dict(THRESHOLDS),
            "projectRoot": str(root), "files": files}
