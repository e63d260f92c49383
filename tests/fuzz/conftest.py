"""Hypothesis profiles for the fuzz suite.

``ci`` (the default) keeps the whole directory to a few seconds of the default
``pytest`` run and is derandomized, so a failure there is the same failure on
every machine. ``long`` (``METAEVAL_FUZZ_PROFILE=long``) runs 10,000 examples
per test, drawn afresh each time; ``METAEVAL_FUZZ_EXAMPLES=N`` sets another
number of examples for either. Neither writes an example database, and
Hypothesis keeps its other files (a cache of the constants in the code under
test) in the temp dir, not in ``.hypothesis/`` of the repository: the tree stays
clean, and a failure is reproduced from the falsifying example Hypothesis prints.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

# Read by Hypothesis the first time it needs its directory, after this runs.
os.environ.setdefault("HYPOTHESIS_STORAGE_DIRECTORY",
                      str(Path(tempfile.gettempdir()) / "metaeval-hypothesis"))

from hypothesis import HealthCheck, settings

_QUIET = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much,
          HealthCheck.large_base_example]

settings.register_profile("ci", max_examples=50, derandomize=True, deadline=None,
                          database=None, suppress_health_check=_QUIET, print_blob=True)
settings.register_profile("long", max_examples=10_000, deadline=None, database=None,
                          suppress_health_check=_QUIET, print_blob=True)
_profile = os.environ.get("METAEVAL_FUZZ_PROFILE", "ci")
if os.environ.get("METAEVAL_FUZZ_EXAMPLES"):  # the profile, with another number of examples
    settings.register_profile("custom", settings.get_profile(_profile),
                              max_examples=int(os.environ["METAEVAL_FUZZ_EXAMPLES"]))
    _profile = "custom"
settings.load_profile(_profile)
