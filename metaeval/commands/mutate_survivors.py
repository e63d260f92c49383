"""A finished run's survivors against the findings file, in one step.

``track`` takes a ``Ran`` and gives what its survivors mean: their diffs, the
last run's survivors saved for ``metaeval findings`` (beside the result cache,
``findings_file.LAST_RUN_FILE``), and, when the request tracks survivors, the
comparison with the findings file (written with ``--update-baseline``) and what
a SARIF file is to hold. A file that cannot be written is a warning (the last
run's) or a write error (the findings file), never the run lost; a findings file
that cannot be read is the step's ``error``. This module never decides the exit
code (``mutate_conclude`` does) and never prints.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from metaeval import vcs
from metaeval.commands.mutate_values import Message, Ran, Tracked
from metaeval.errors import InputError, OutputError
from metaeval.mutation.find.diffs import rewrite_diff
from metaeval.mutation.findings_file import (
    LAST_RUN_FILE,
    Findings,
    Seen,
    compare,
    save_last_run,
    updated,
)
from metaeval.mutation.findings_file import load as load_findings
from metaeval.mutation.findings_file import save as save_findings
from metaeval.mutation.model import MutantResult, Status


@dataclass(frozen=True, slots=True)
class Survivors:
    """What the survivors of one run came to."""

    after: tuple[Message, ...] = ()
    """The last run's survivors that could not be saved."""
    tracked: Tracked | None = None
    """Against the findings file, when the request tracks survivors."""
    write_errors: tuple[OutputError, ...] = ()
    """The findings file could not be written."""
    error: InputError | None = None
    """The findings file could not be read: nothing is tracked."""


def track(ran: Ran) -> Survivors:
    """The survivors of ``ran``: saved as the last run's, and against the findings
    file when its request asks (``MutateRequest.tracks_survivors``)."""
    plan, results = ran.plan, ran.run.results
    request, root = plan.request, plan.root
    diffs = survivor_diffs(results, root)
    seen = Seen(vcs.head_commit(root), vcs.today().isoformat())
    tracked: Tracked | None = None
    failed: tuple[OutputError, ...] = ()
    error: InputError | None = None
    if request.tracks_survivors:
        try:
            tracked, failed = track_survivors(
                results, plan.findings_file, request.update_baseline, diffs=diffs, seen=seen,
                sarif=request.sarif_path is not None, since=request.since_ref is not None,
                prints=plan.fingerprints)
        except InputError as e:
            error = e  # nothing tracked; the last run's survivors are saved all the same
    # What 'metaeval findings list' and 'show' read before any --update-baseline: like
    # a cache, a file that cannot be written costs a convenience, not the run. It sits
    # beside the result cache, so that a run told to keep its cache out of the tree
    # (--cache elsewhere) leaves the tree as it found it. A shard's survivors are a
    # share of the run: the merge, which has them all, saves them.
    after: tuple[Message, ...] = ()
    try:
        if request.shard is None:
            save_last_run(results, diffs, seen, root,
                          plan.cache_file.parent / LAST_RUN_FILE.name, plan.fingerprints)
    except OutputError as e:
        after = (Message(f"warning: {e}; 'metaeval findings' will not see this "
                         "run's survivors", stderr=True),)
    return Survivors(after, tracked, failed, error)


def survivor_diffs(results: Sequence[MutantResult], root: Path) -> dict[str, str]:
    """Mutant id -> the diff of each survivor (Survived and NoCoverage)."""
    return {r.mutant.id: rewrite_diff(r, root) for r in results
            if r.status in (Status.SURVIVED, Status.NO_COVERAGE)}


def track_survivors(results: Sequence[MutantResult], findings_file: Path, update: bool, *,
                    diffs: dict[str, str], seen: Seen, sarif: bool = False,
                    since: bool = False, prints: Mapping[str, str] | None = None
                    ) -> tuple[Tracked, tuple[OutputError, ...]]:
    """Compare a run's survivors with the findings file: what is new, known and
    fixed; write the file (``update``); say what a SARIF file (``sarif``) is to
    hold: the new survivors when the run is a pull request's (``since``: what it
    introduced, not the backlog), else every open one. Returns what was tracked
    and the findings file when it could not be written. Raises ``InputError``
    for a findings file that cannot be read. ``prints``: the fingerprints of every
    mutant found, when ``results`` are some of them (``--since``)."""
    shown = _shown(findings_file)
    baseline = load_findings(findings_file)
    comparison = compare(baseline, results, diffs, seen, vcs.today(), prints)
    failed: list[OutputError] = []
    after = updated(baseline, results, diffs, seen, prints)
    written = False
    if update:
        try:
            save_findings(after, findings_file)
            written = True
        except OutputError as e:
            failed.append(e)
    # A pull request's SARIF holds what it introduced; the open backlog is the full
    # run's (or 'metaeval findings export').
    reported = None if not sarif else Findings(comparison.new) if since else after
    return Tracked(comparison, shown, written, reported, since), tuple(failed)


def _shown(path: Path) -> Path:
    """``path`` relative to the current directory when it lies under it, as typed."""
    if path.is_absolute() and path.is_relative_to(Path.cwd()):
        return path.relative_to(Path.cwd())
    return path
