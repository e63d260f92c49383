"""One module per command: plan, run, measure, and return a result.

A command reads the config, loads its input, runs and measures through the
feature packages, and returns a frozen value saying what happened and which
exit code it earns. It never prints and never renders: the command line
(``metaeval.cli``) shows the result through ``metaeval.report``, which sits
above this layer. Nothing below this layer imports it.
"""
