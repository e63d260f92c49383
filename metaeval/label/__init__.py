"""``metaeval label``: a local labelling page for runs and judge items.

``store`` keeps the labels file whole at every moment, ``queue`` puts what is
to be labelled in order (near misses first), ``agree`` measures the annotators
against each other, ``merge`` joins annotators' files, ``app`` is the Starlette
application behind a per-session token and ``server`` runs it on loopback. The
page itself is ``static/``: it puts every piece of data in with ``textContent``,
never as markup. Nothing here writes anything but the labels file (and
``--merge``'s output); the runs and items are read, never changed.
"""
