"""``metaeval validate``: load meta-set and judge-item files and name every bad line.

Loads the files given (default: the configured meta-sets), the meta-set lines
through the checks they declare and the ``*.ndjson`` judge items beside them;
returns the loaded set with every error. Never prints.
"""

from __future__ import annotations

from pathlib import Path

from metaeval.config import Config
from metaeval.errors import ExitCode
from metaeval.judge_items import ITEM_SUFFIX, with_judge_items
from metaeval.judges.scales import configured_audit
from metaeval.meta_set import MetaSet, load_meta_sets
from metaeval.suites import apply_suite, suite_names


def validate(paths: tuple[Path, ...], config: Config) -> MetaSet:
    """Everything under ``paths`` (default: the configured meta-sets), with every error."""
    targets = list(paths) or config.paths(config.meta_sets)
    # Integer judge-item labels on the project's declared label scale, as judge-audit reads them.
    labels = configured_audit(config.judge_audit).label_scale or (1, 5)
    suite = config.meta_eval.suite
    loaded = load_meta_sets([t for t in targets if t.suffix != ITEM_SUFFIX],
                            config.allowed_modules, config.judges, suite_names(suite))
    if suite:
        # A run that cannot take a suite check it is selected for is as bad as a bad line.
        runs, errors = apply_suite(loaded.runs, suite, config.allowed_modules, config.judges)
        loaded = MetaSet(tuple(runs), (*loaded.errors, *errors), loaded.files)
    return with_judge_items(targets, loaded, labels)


def validate_code(loaded: MetaSet) -> ExitCode:
    """0 when every line loads, 2 when any line (or file) is bad."""
    return ExitCode.BAD_INPUT if loaded.errors else ExitCode.OK
