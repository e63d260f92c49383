"""Example patch mutants: each switches off one control, and a test must notice.

A patch mutant replaces ``target`` (``package.module:attr``) while the tests
run, by a Python expression or by a function defined here. ``breaks`` says, in
one sentence, which control it switches off. Add mutants for your own guards,
validators and graders here, and point [tool.metaeval.mutate] targets at them.
"""

from metaeval.mutation.patches import PatchMutant

MUTANTS = [
    PatchMutant(
        id="state-diff-sees-nothing",
        target="metaeval.state:state_diff",
        replacement="lambda initial, final: []",
        breaks="state_unchanged passes runs with side effects the task forbids.",
    ),
]
