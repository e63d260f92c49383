"""An example patch mutant, left out of every run until you edit it.

A patch mutant replaces ``target`` (``package.module:attr``) while the tests
run, by a Python expression or by a function defined here. ``breaks`` says, in
one sentence, which control it switches off; one of your tests must notice.
This one is reported Ignored ("example: edit me") until you point ``target``
at one of your guards, validators or graders, write what it breaks, and delete
its ``skip`` line. Rewrite mutants of [tool.metaeval.mutate] targets run
without any file here.
"""

from metaeval.mutation.patches import PatchMutant

MUTANTS = [
    PatchMutant(
        id="example-edit-me",
        target=@@TARGET@@,
        # What the target becomes while the tests run: e.g. a guard that allows
        # everything is "lambda *args, **kwargs: True".
        replacement="lambda *args, **kwargs: None",
        breaks="EDIT ME: the control this fault switches off, e.g. 'the refund guard "
               "allows any amount'.",
        skip="example: edit me (point target at a control, say what breaks, delete this line)",
    ),
]
