"""Open findings as SARIF 2.1.0, in the shape code-scanning upload accepts:
one result per open survivor, its rule the operator or patch id, its location
the file and line, its message what breaks and the diff. Only renders."""

from __future__ import annotations

import datetime as dt
import json

from metaeval import __version__
from metaeval.mutation.findings_file import FindingEntry, Findings, FindingStatus

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def _message(e: FindingEntry) -> str:
    what = e.breaks or "every selected test passes with this fault in place"
    kind = "no test reaches it" if e.mutant_status == "NoCoverage" else "no test fails"
    return f"Surviving mutant ({kind}): {what}\n\n{e.diff}".rstrip()


def sarif(findings: Findings, today: dt.date) -> str:
    open_entries = [e for e in findings.entries
                    if e.effective_status(today) is FindingStatus.OPEN]
    rules = sorted({e.rule for e in open_entries})
    index = {rule: i for i, rule in enumerate(rules)}
    results = [{
        "ruleId": e.rule,
        "ruleIndex": index[e.rule],
        "level": "warning",
        "message": {"text": _message(e)},
        "locations": [{"physicalLocation": {
            "artifactLocation": {"uri": e.path, "uriBaseId": "%SRCROOT%"},
            "region": {"startLine": max(e.line, 1)}}}],
        "partialFingerprints": {"metaevalFingerprint/v1": e.fingerprint},
        "properties": {"mutantId": e.mutant_id, "qualname": e.qualname},
    } for e in open_entries]
    log = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "metaeval",
                "version": __version__,
                "rules": [{"id": rule, "name": rule,
                           "shortDescription": {"text": f"Surviving mutant: {rule}"}}
                          for rule in rules]}},
            "results": results,
        }],
    }
    return json.dumps(log, indent=2, sort_keys=True) + "\n"
