"""Finding mutants: the libcst operators, targets, pragmas, ``--since`` and the
scan cache. Parses the user's source; never imports or runs it."""
