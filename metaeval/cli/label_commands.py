"""``metaeval label``: the local labelling page, and ``--merge`` of annotators' files.

Kept apart from ``app.py`` so that it stays small; registered there with one line.
Starlette and uvicorn (the ``label`` extra) are imported only when the page is
served, so every other command runs without them.
"""

from __future__ import annotations

import sys
import webbrowser
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import click

from metaeval.cli.options import echo, refuse_inputs_as_outputs, user_errors
from metaeval.config import load_config
from metaeval.errors import InputError
from metaeval.report.escape import one_line

if TYPE_CHECKING:
    from metaeval.label.store import LabelStore


@click.command("label")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--labels", "labels_path", type=click.Path(path_type=Path, dir_okay=False),
              help="The labels file (JSON Lines) every label is written to as it is given; "
              "its earlier labels are read first.")
@click.option("--annotator", help="Your name, written with every label you give.")
@click.option("--recorded", type=click.Path(path_type=Path, dir_okay=False),
              help="A judge's recorded verdicts on the items: items where it disagrees with "
              "the labels, or with itself between orders, come first.")
@click.option("--next-for", "next_for", type=click.Path(path_type=Path, dir_okay=False),
              help="An inconclusive judge-audit's JSON: the unlabelled items that would "
              "move its open decision come first (the judge wavers, then it goes against "
              "the majority label).")
@click.option("--show-graders", is_flag=True,
              help="Show what each grader (and a recorded judge) found, for adjudication. "
              "Without it the page is blind: annotators never see a verdict.")
@click.option("--compare-with", "compare_with", multiple=True,
              type=click.Path(path_type=Path),
              help="Another annotator's labels file, or a folder of them: read (never "
              "written) for the comparison view. Repeatable.")
@click.option("--port", type=click.IntRange(0, 65535), default=0,
              help="Port on 127.0.0.1 [default: a free one].")
@click.option("--no-browser", is_flag=True, help="Print the URL; do not open a browser.")
@click.option("--merge", is_flag=True,
              help="Merge the labels files PATHS (two or more annotators') into -o.")
@click.option("-o", "--output", type=click.Path(path_type=Path, dir_okay=False),
              help="With --merge: the merged labels file to write.")
@user_errors
def label(paths: tuple[Path, ...], labels_path: Path | None, annotator: str | None,
          recorded: Path | None, next_for: Path | None, show_graders: bool,
          compare_with: tuple[Path, ...], port: int, no_browser: bool, merge: bool,
          output: Path | None) -> None:
    """Label runs (meta-set .jsonl) and judge items (.ndjson) in a local web page.

    Serves on 127.0.0.1 with a per-session token in the printed URL; every label is
    kept in --labels as it is given. Ctrl-C stops it. With --merge: PATHS are
    labels files, merged into -o.

    Exit 0 when stopped (or merged); 2 bad input.
    """
    if merge:
        unused = [flag for flag, given in (
            ("--labels", labels_path is not None), ("--annotator", annotator is not None),
            ("--recorded", recorded is not None), ("--next-for", next_for is not None),
            ("--show-graders", show_graders),
            ("--compare-with", bool(compare_with)), ("--port", port != 0),
            ("--no-browser", no_browser)) if given]
        if unused:
            raise InputError(f"{', '.join(unused)}: not used by --merge, which serves no page; "
                             "expected --merge A B ... -o OUT alone")
        if output is None:
            raise InputError("--merge: expected -o FILE, the merged labels file to write")
        from metaeval.label.merge import merge as merge_files

        refuse_inputs_as_outputs([("-o", output)], [("PATH", p, "*") for p in paths])
        merged = merge_files(paths, output)
        for torn in merged.torn:
            echo(f"warning: {torn}", err=True)
        echo(f"{merged.rows} labels by {len(merged.annotators)} annotator(s) "
             f"({', '.join(one_line(a) for a in merged.annotators)}) -> {output}"
             + (f"; {merged.repeated} repeated row(s) kept once" if merged.repeated else ""))
        sys.exit(0)
    if labels_path is None or annotator is None:
        raise InputError("expected --labels FILE and --annotator NAME (or --merge A B -o OUT)")
    if output is not None:
        raise InputError("-o: used only with --merge; the page writes to --labels")
    try:
        import metaeval.label.server  # noqa: F401  (the extra's imports, checked first)
    except ImportError as e:
        raise InputError(f"metaeval label needs the extra metaeval[label] (Starlette and "
                         f"uvicorn): pip install 'metaeval[label]' ({e})") from e
    from metaeval.label.session import checked_annotator
    from metaeval.label.store import LabelStore

    refuse_inputs_as_outputs([("--labels", labels_path)], [("PATH", p, "*") for p in paths])
    name = checked_annotator(annotator)
    with LabelStore(labels_path) as store:
        if store.torn is not None:
            echo(f"warning: {store.torn}", err=True)
        _serve(paths, name, store, recorded,
               Page(show_graders, compare_with, port, no_browser, next_for))


@dataclass(frozen=True, slots=True)
class Page:
    """How the page is served: the label command's flags past the data."""

    show_graders: bool
    compare_with: tuple[Path, ...]
    port: int
    no_browser: bool
    next_for: Path | None = None


def _serve(paths: tuple[Path, ...], name: str, store: LabelStore, recorded: Path | None,
           page: Page) -> None:
    from metaeval.label.server import serve
    from metaeval.label.session import load_entries, other_labels

    labels_path = store.path
    others = other_labels(page.compare_with, labels_path)
    from metaeval.label.next_for import read_open_audit

    audit = read_open_audit(page.next_for) if page.next_for is not None else None
    entries = load_entries(paths, name, store, load_config(), recorded, audit)
    near = sum(1 for e in entries if e.near_miss)
    if audit is not None:
        wavers, against, other = audit.groups(e.id for e in entries if e.kind != "run")
        first = (f"the {wavers + against + other} unlabelled item(s) of {page.next_for} "
                 f"first: {wavers} where the judge wavers, {against} against the majority "
                 f"label, {other} other, interleaved")
    else:
        first = f"{near} near misses first"
    mode = ("adjudication: what the graders found is shown" if page.show_graders
            else "blind: no grader or judge verdict is shown")

    def ready(url: str, launch: str) -> None:
        echo(f"{len(entries)} to label ({one_line(first)}) as {one_line(name)}; "
             f"labels -> {labels_path}; {mode}"
             + (f"; comparing with {len(others)} other labels file(s)" if others else ""))
        echo(f"open {url}  (Ctrl-C stops)")
        sys.stdout.flush()
        if not page.no_browser:
            # The one-time URL, not the token's: a browser's command line is public.
            webbrowser.open(launch)

    serve(name, entries, store, ready=ready, port=page.port, blind=not page.show_graders,
          others=others)
