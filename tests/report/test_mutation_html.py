"""The mutation report as a page: the shipped viewer bundle, the report bound to it,
and the tracked findings in the same schema (``findings export --html``)."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import re
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner

from metaeval.cli import main
from metaeval.contract import JsonObject
from metaeval.errors import InputError
from metaeval.mutation.find.diffs import unified_diff
from metaeval.mutation.findings_file import FindingEntry, Findings, FindingStatus, Seen
from metaeval.report.mutation_html import bundle, findings_report, mutation_html

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "tests" / "schemas" / "mutation-testing-report-schema.json")
                    .read_text(encoding="utf-8"))
VENDOR = resources.files("metaeval.report").joinpath("vendor/mutation-testing-elements")
TODAY = dt.date(2026, 12, 1)
SEEN = Seen("c" * 40, "2026-11-01")

SOURCE = """def clamp_quantity(quantity, limit=10):
    if quantity > limit:
        return limit
    return quantity
"""


def bound_report(page: str) -> object:
    """The literal the page assigns to the viewer's ``report``, read back."""
    match = re.search(r"^app\.report = (.*);$", page, re.MULTILINE)
    assert match is not None
    return json.loads(match.group(1))


def test_the_bundle_is_the_published_one_unmodified() -> None:
    note = VENDOR.joinpath("SOURCE").read_text(encoding="utf-8")
    declared = re.search(r"^file sha256: ([0-9a-f]{64})$", note, re.MULTILINE)
    assert declared is not None
    assert hashlib.sha256(bundle().encode("utf-8")).hexdigest() == declared.group(1)
    assert "version: 3.9.0" in note and "registry.npmjs.org" in note
    assert "Apache License" in VENDOR.joinpath("LICENSE").read_text(encoding="utf-8")
    # Inlined as it is, it must not end its own <script> element early.
    assert "</script" not in bundle().lower()


def test_the_page_inlines_the_viewer_and_binds_the_report() -> None:
    report: JsonObject = {"schemaVersion": "2", "thresholds": {"high": 80, "low": 60},
                          "files": {}}
    page = mutation_html(report)
    assert bundle() in page
    assert "<mutation-test-report-app" in page
    assert bound_report(page) == report
    assert "src=" not in page.split("<body>")[1]  # nothing loaded from elsewhere


def test_a_hostile_file_name_stays_inside_the_report_literal() -> None:
    name = "</script><script>alert(1)</script><!--"
    report: JsonObject = {"schemaVersion": "2", "files": {name: {
        "language": "python", "source": "x = 1 & 2\n", "mutants": []}}}
    page = mutation_html(report, title='a "title" <b>')
    body = page.split("<body>")[1]
    assert body.count("</script>") == 1  # only the page's own
    ours = page.replace(bundle(), "")
    assert "<b>" not in ours and "&quot;title&quot;" in ours
    assert bound_report(page) == report


def plain(report: JsonObject) -> Any:
    """The report as plain JSON values, to index freely."""
    return json.loads(json.dumps(report))


def finding(status: FindingStatus = FindingStatus.OPEN, **fields: str) -> FindingEntry:
    mutated = SOURCE.replace("quantity > limit", "quantity >= limit")
    values = {"fingerprint": "f" * 64, "mutant_id": "shop/pricing.py::clamp_quantity::x::0",
              "rule": "flip_comparison", "mutant_status": "Survived",
              "path": "shop/pricing.py", "qualname": "clamp_quantity",
              "breaks": "a quantity at the limit is capped",
              "diff": unified_diff(SOURCE, mutated, "shop/pricing.py")} | fields
    return FindingEntry(values["fingerprint"], values["mutant_id"], values["rule"],
                        values["mutant_status"], values["path"], 2, values["qualname"],
                        values["breaks"], values["diff"], SEEN, SEEN, status,
                        reason="equivalent" if status is FindingStatus.ACCEPTED else "",
                        accepted_by="dana" if status is FindingStatus.ACCEPTED else "")


def test_findings_become_mutants_at_their_line_with_their_change(tmp_path: Path) -> None:
    (tmp_path / "shop").mkdir()
    (tmp_path / "shop" / "pricing.py").write_text(SOURCE, encoding="utf-8")
    accepted = finding(FindingStatus.ACCEPTED, fingerprint="a" * 64, rule="negate_condition",
                       mutant_status="NoCoverage")
    report = plain(findings_report(Findings((finding(), accepted)), tmp_path, TODAY))
    jsonschema.validate(report, SCHEMA)
    file = report["files"]["shop/pricing.py"]
    assert file["source"] == SOURCE
    open_one, accepted_one = file["mutants"]
    assert open_one["location"] == {"start": {"line": 2, "column": 1},
                                    "end": {"line": 2, "column": 25}}
    assert open_one["replacement"] == "    if quantity >= limit:"
    assert (open_one["status"], open_one["mutatorName"]) == ("Survived", "flip_comparison")
    assert open_one["description"] == "a quantity at the limit is capped"
    # Accepted with a reason is not a survivor any more: shown, but as Ignored.
    assert accepted_one["status"] == "Ignored"
    assert accepted_one["statusReason"] == "accepted by dana: equivalent"


def test_a_finding_whose_file_is_gone_still_has_a_place(tmp_path: Path) -> None:
    report = plain(findings_report(Findings((finding(),)), tmp_path, TODAY))
    jsonschema.validate(report, SCHEMA)
    file = report["files"]["shop/pricing.py"]
    assert file["source"] == "    if quantity > limit:\n"
    assert file["mutants"][0]["location"]["start"]["line"] == 1


def test_findings_export_html_writes_the_page_and_needs_a_target(tmp_path: Path) -> None:
    path = tmp_path / "findings.json"
    from metaeval.mutation.findings_file import save

    save(Findings((finding(),)), path)
    page = tmp_path / "out" / "findings.html"
    done = CliRunner().invoke(main, ["findings", "export", "--html", str(page),
                                     "--file", str(path)])
    assert done.exit_code == 0, done.output
    report = bound_report(page.read_text(encoding="utf-8"))
    assert isinstance(report, dict)
    assert list(report["files"]) == ["shop/pricing.py"]
    nothing = CliRunner().invoke(main, ["findings", "export", "--file", str(path)])
    assert nothing.exit_code == 2
    assert "give --sarif PATH, --html PATH or both" in nothing.output


def test_an_unwritable_html_path_still_writes_the_sarif(tmp_path: Path) -> None:
    path = tmp_path / "findings.json"
    from metaeval.mutation.findings_file import save

    save(Findings((finding(),)), path)
    (tmp_path / "not-a-dir").write_text("a file\n", encoding="utf-8")
    page = tmp_path / "not-a-dir" / "findings.html"
    sarif = tmp_path / "findings.sarif"
    done = CliRunner().invoke(main, ["findings", "export", "--html", str(page), "--sarif",
                                     str(sarif), "--file", str(path)])
    assert done.exit_code == 2
    assert sarif.is_file() and f"wrote {sarif}" in done.stdout
    assert done.stderr.startswith(f"error: {page}: cannot write:")


# --- a findings file names only files inside the repository --------------------------


def _export(project: Path, findings: dict[str, object], monkeypatch: Any) -> Any:
    (project / "pyproject.toml").write_text("[project]\nname = 'shop'\n", encoding="utf-8")
    path = project / "findings.json"
    path.write_text(json.dumps(findings), encoding="utf-8")
    monkeypatch.chdir(project)
    return CliRunner().invoke(main, ["findings", "export", "--html", "out.html",
                                     "--file", str(path)])


def _findings_naming(name: str, tmp_path: Path) -> dict[str, object]:
    from metaeval.mutation.findings_file import dumps

    document = json.loads(dumps(Findings((finding(),))))
    document["findings"][0]["path"] = name
    return dict(document)


def test_findings_export_never_puts_the_environment_in_the_page(
        tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setenv("METAEVAL_TEST_SECRET", "sk-do-not-leak")
    done = _export(tmp_path, _findings_naming("/proc/self/environ", tmp_path), monkeypatch)
    assert done.exit_code == 2
    assert "findings[0].path: got '/proc/self/environ'; expected a path inside the " \
           "repository" in done.stderr
    assert not (tmp_path / "out.html").exists()
    assert "sk-do-not-leak" not in done.output


def test_findings_export_refuses_a_link_out_of_the_repository(
        tmp_path: Path, monkeypatch: Any) -> None:
    # The name passes the loader's text check; the file system shows where it leads.
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("TOKEN = 'sk-do-not-leak'\n", encoding="utf-8")
    project = tmp_path / "project"
    (project / "shop").mkdir(parents=True)
    (project / "shop" / "pricing.py").symlink_to(outside / "secret.py")
    done = _export(project, _findings_naming("shop/pricing.py", tmp_path), monkeypatch)
    assert done.exit_code == 2, done.output
    assert "path: got 'shop/pricing.py'; expected a path inside the repository" in done.stderr
    assert "leads to" in done.stderr and not (project / "out.html").exists()


def test_findings_export_refuses_a_device_and_a_fifo(tmp_path: Path, monkeypatch: Any) -> None:
    project = tmp_path / "project"
    (project / "shop").mkdir(parents=True)
    (project / "shop" / "zero.py").symlink_to("/dev/zero")  # leaves the tree too
    os.mkfifo(project / "shop" / "pipe.py")  # inside the tree, but never a source file
    done = _export(project, _findings_naming("shop/pipe.py", tmp_path), monkeypatch)
    assert done.exit_code == 2, done.output
    assert "pipe.py' is a fifo; expected a regular file" in done.stderr
    done = _export(project, _findings_naming("shop/zero.py", tmp_path), monkeypatch)
    assert done.exit_code == 2, done.output
    assert "leads to '/dev/zero'" in done.stderr


def test_findings_report_reads_a_link_that_stays_inside(tmp_path: Path) -> None:
    # The "no" of the checks above: a link within the repository is an ordinary source.
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "pricing.py").write_text(SOURCE, encoding="utf-8")
    (tmp_path / "shop").symlink_to(tmp_path / "real")
    report = plain(findings_report(Findings((finding(),)), tmp_path, TODAY))
    assert report["files"]["shop/pricing.py"]["source"] == SOURCE


def test_findings_report_refuses_a_source_past_the_bound(tmp_path: Path,
                                                          monkeypatch: Any) -> None:
    import metaeval.report.mutation_html as page

    (tmp_path / "shop").mkdir()
    (tmp_path / "shop" / "pricing.py").write_text(SOURCE, encoding="utf-8")
    monkeypatch.setattr(page, "SOURCE_LIMIT", len(SOURCE) - 1)
    with pytest.raises(InputError, match=rf"holds {len(SOURCE)} bytes; expected at most"):
        findings_report(Findings((finding(),)), tmp_path, TODAY, "f.json")
