"""The last phase of ``metaeval mutate``: a ``Ran`` concluded into a ``MutateResult``.

The run's exit code (``runner.exit_code``), its survivors tracked in one step
(``mutate_survivors.track``), and what the findings file decides instead when
the request names one or updates it. ``--merge`` concludes the shards' merged
run the same way. This module never prints and never renders: the report and
SARIF files are the rendering layer's (``metaeval.report.mutate_outcome.finish``).
"""

from __future__ import annotations

from metaeval.commands.mutate_survivors import track
from metaeval.commands.mutate_values import Message, MutateResult, Ran
from metaeval.errors import ExitCode
from metaeval.mutation.run.runner import exit_code


def conclude(ran: Ran) -> MutateResult:
    """A finished run's exit code and its survivors against the findings file, with
    the ``Ran``'s warnings and write errors (a write error makes it exit 2, unless
    the run is void)."""
    plan, run = ran.plan, ran.run
    code = exit_code(run)
    if code is ExitCode.VOID:
        why = Message(f"error: no mutant ran ({len(plan.mutants)} found); nothing was tested",
                      stderr=True)
        return MutateResult(code, plan.root, plan.notes, run, plan.report_file,
                            (*ran.after, why), write_errors=ran.write_errors)
    survivors = track(ran)
    request, tracked = plan.request, survivors.tracked
    if survivors.error is not None or ran.write_errors:
        code = ExitCode.BAD_INPUT
    elif tracked is not None and request.update_baseline:
        # Updating accepts the run as it is (as cargo-mutants and Stryker do): the
        # new survivors are in the file now, open. What the written file would
        # still fail on (an acceptance past its expiry) fails this run too.
        code = ExitCode.FINDINGS if tracked.comparison.expired else ExitCode.OK
    elif tracked is not None and request.baseline_path is not None:
        code = ExitCode.FINDINGS if tracked.comparison.failing else ExitCode.OK
    return MutateResult(code, plan.root, plan.notes, run, plan.report_file,
                        (*ran.after, *survivors.after), tracked,
                        None if survivors.error else request.sarif_path,
                        survivors.error, (*survivors.write_errors, *ran.write_errors))
