"""Fork isolation (``--isolation fork``), one home, read top to bottom.

The parent side runs in ``metaeval mutate``: ``parent`` starts the warm pytest
process and reads its stream, one handler per message of ``protocol``. The
child side runs inside the user's pytest process: ``warm_session`` (the warm
process: collects once, traces the ``baseline`` in forked children, plans each
mutant with ``planner``, forks a child per mutant through ``pool``) and
``child`` (what a forked child does: put the mutant in place with ``swap`` or
``reload`` and ``registries``, run its ``items``); ``preload`` and
``failing_import`` serve the warm process. The child side never loads libcst
nor ``mutation.find`` (``tests/mutation/test_boundaries.py``).
"""
