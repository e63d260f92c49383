"""Refuse an option given twice that takes one value.

click keeps the last value of a repeated option that is not ``multiple``: the
first is dropped without a word (``--recorded a.jsonl --recorded b.jsonl``
audits only ``b``). An input the user gave is used or refused, so the root
group checks every command line once, before any command runs: each option
that is neither ``multiple`` nor a counter may appear once. Knows about click;
used only by ``metaeval.cli.app``.
"""

from __future__ import annotations

from collections import Counter

import click


def once_only(param: click.Parameter) -> bool:
    """Whether ``param`` keeps a single value, so that a second would replace the first."""
    return (isinstance(param, click.Option) and not param.multiple and not param.count
            and not param.is_eager)  # --help and --version end the command at once


def refuse_repeats(command: click.Command, ctx: click.Context, args: list[str]) -> None:
    """A ``UsageError`` (exit 2) naming the first option of ``args`` given more than once
    that takes one value; follows subcommands down through groups. ``args`` is only
    read: click parses it again when the command runs."""
    sub = click.Context(command, info_name=ctx.info_name, parent=ctx.parent,
                        resilient_parsing=True)
    parser = command.make_parser(sub)
    try:
        _, rest, order = parser.parse_args(args=list(args))
    except click.UsageError:
        return  # click says what is wrong when the command parses it for real
    seen = Counter(param.name for param in order if once_only(param))
    for param in order:
        if seen[param.name] > 1 and isinstance(param, click.Option):
            names = "/".join(param.opts + param.secondary_opts)
            raise click.UsageError(
                f"{names} given {seen[param.name]} times; expected it once (it takes one "
                "value: a second would silently replace the first)", ctx)
    if isinstance(command, click.Group) and rest:
        found = command.get_command(sub, rest[0])
        if found is not None:
            child = click.Context(found, info_name=rest[0], parent=sub)
            refuse_repeats(found, child, rest[1:])
