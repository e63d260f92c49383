"""``metaeval judge-import FORMAT LOG``: a published judge log, as its tool wrote it,
into judge items and recorded verdicts for ``judge-audit --recorded``; and
``judge-import annotations``: several annotators' labels (``{annotator: {item_id:
label}}``) into items that carry them; ``judge-import-llmbar``: the LLMBar dataset.
Parses the flags and calls one importer; never maps a field itself."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import click

from metaeval.cli.options import echo, refuse_inputs_as_outputs, user_errors
from metaeval.errors import InputError
from metaeval.files import write_atomic, write_ndjson
from metaeval.importers import JUDGE_FORMATS, JudgeLogFormat, LogOptions, picked_judge_format
from metaeval.importers.common import Converted

LOG = click.argument("log", type=click.Path(path_type=Path, exists=True, dir_okay=False))
ITEMS = click.option("--items", "items_out", required=True, type=click.Path(path_type=Path),
                     help="Where to write the judge items (*.ndjson, \"label\": null).")
RECORDED = click.option("--recorded", "recorded_out", required=True,
                        type=click.Path(path_type=Path),
                        help="Where to write the recorded verdicts (JSONL).")


def _prefix(default: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    return click.option("--prefix", default=default, show_default=True,
                        help="Item id prefix.")


def _write(log: Path, converted: Converted, items_out: Path | None, recorded_out: Path,
           hint: str) -> None:
    # Checked before anything is written: an output over the log would lose it.
    refuse_inputs_as_outputs([("--items", items_out), ("--recorded", recorded_out)],
                             [("LOG", log, "")])
    if items_out is not None:
        write_ndjson(items_out, converted.items)
        echo(f"{len(converted.items)} items -> {items_out}")
    write_ndjson(recorded_out, converted.recorded)
    echo(f"{len(converted.recorded)} recorded verdicts -> {recorded_out}")
    echo(hint, err=True)


@click.command("judge-import-llmbar")
@click.argument("dataset", type=click.Path(path_type=Path, exists=True, dir_okay=False))
@click.option("--result", type=click.Path(path_type=Path, exists=True, dir_okay=False),
              help="LLMBar result.json of a judge: its verdicts in both orders.")
@click.option("--items", "items_out", required=True, type=click.Path(path_type=Path),
              help="Where to write the pairwise judge items (*.ndjson).")
@click.option("--recorded", "recorded_out", type=click.Path(path_type=Path),
              help="Where to write the recorded verdicts (needs --result).")
@click.option("--prefix", default="llmbar", show_default=True, help="Item id prefix.")
@user_errors
def judge_import_llmbar(dataset: Path, result: Path | None, items_out: Path,
                        recorded_out: Path | None, prefix: str) -> None:
    """Convert an LLMBar dataset (and a judge's result file) for judge-audit."""
    from metaeval.files import write_ndjson
    from metaeval.loaders.llmbar import convert_llmbar

    if recorded_out is not None and result is None:
        raise InputError("--recorded: needs --result, the judge's LLMBar result.json")
    refuse_inputs_as_outputs([("--items", items_out), ("--recorded", recorded_out)],
                             [("DATASET", dataset, ""), ("--result", result, "")])
    converted = convert_llmbar(dataset, result, prefix=prefix)
    write_ndjson(items_out, converted.items)
    echo(f"{len(converted.items)} items -> {items_out}")
    if recorded_out is not None:
        write_ndjson(recorded_out, converted.recorded)
        echo(f"{len(converted.recorded)} recorded verdicts -> {recorded_out}")


@click.group("judge-import")
def judge_import() -> None:
    """Convert a published judge log for judge-audit --recorded (no hand mapping)."""


SEED = click.option("--seed", type=int, default=0, show_default=True,
                    help="The annotator's seed, which with each instruction decided the order "
                         "shown.")


def _log_command(unit: JudgeLogFormat) -> click.Command:
    """``judge-import NAME LOG --items --recorded --prefix [--seed]`` for one registered
    format: the option stack is written once, here, for every format."""

    def command(log: Path, items_out: Path, recorded_out: Path, prefix: str,
                seed: int = 0) -> None:
        _write(log, unit.convert(log, LogOptions(prefix, seed)), items_out, recorded_out,
               unit.hint)

    decorated: Callable[..., None] = user_errors(command)
    for option in reversed((LOG, ITEMS, RECORDED, _prefix(unit.prefix),
                            *((SEED,) if unit.seeded else ()))):
        decorated = option(decorated)
    return click.command(unit.name, help=unit.summary)(decorated)


for _unit in JUDGE_FORMATS.values():
    judge_import.add_command(_log_command(_unit))


@judge_import.command("auto", help="A judge log of any format above, picked by reading its "
                      "first record (and named on stderr).")
@LOG
@ITEMS
@RECORDED
@click.option("--prefix", default=None,
              help="Item id prefix (default: the picked format's, as its command has).")
@click.option("--seed", type=int, default=None,
              help="The annotator's seed, for a format whose order shown depends on one "
                   "(alpaca-eval; default 0); refused for another.")
@user_errors
def auto(log: Path, items_out: Path, recorded_out: Path, prefix: str | None,
         seed: int | None) -> None:
    unit = picked_judge_format(log)
    echo(f"format: {unit.name} (picked by reading the log's first record)", err=True)
    if seed is not None and not unit.seeded:
        raise InputError(f"--seed: got {seed}, but the log is {unit.name}, whose order shown "
                         "depends on no seed; expected no --seed")
    _write(log, unit.convert(log, LogOptions(unit.prefix if prefix is None else prefix,
                                             seed or 0)),
           items_out, recorded_out, unit.hint)


@judge_import.command("codes")
@LOG
@RECORDED
@click.option("--code", "codes", multiple=True, metavar="CODE=MEANING",
              help="What a code means: first, second, tie or unscored (the position shown), "
              "or a, b, tie or unscored (the item's response). Every code, once each.")
@click.option("--id-field", default="id", show_default=True, help="The key of the item id.")
@click.option("--code-field", default="verdict", show_default=True,
              help="The key of the code.")
@click.option("--order-field", default=None, help="The key of the order shown (ab/ba).")
@click.option("--order", "order", type=click.Choice(["ab", "ba"]), default=None,
              help="The order shown, for every line of the log.")
@click.option("--sample-field", default=None, help="The key of the sample index, if any.")
@user_errors
def codes(log: Path, recorded_out: Path, codes: tuple[str, ...], id_field: str,
          code_field: str, order_field: str | None, order: str | None,
          sample_field: str | None) -> None:
    """An integer-code log (0/1/2 ...), each code's meaning declared with --code."""
    from metaeval.errors import InputError
    from metaeval.importers.codes import convert, parse_codes

    if order is not None and order_field is not None:
        raise InputError("--order: given with --order-field; expected one of them")
    _write(log, convert(log, parse_codes(codes), id_field=id_field, code_field=code_field,
                   order_field=order_field, order=order, sample_field=sample_field),
           None, recorded_out, "recorded verdicts only: audit them with your own --items")


@judge_import.command("annotations")
@click.argument("annotations", type=click.Path(path_type=Path, exists=True, dir_okay=False))
@click.option("--kind", type=click.Choice(["pairwise", "pointwise"]), default="pairwise",
              show_default=True, help="What the labels judge: a pair, or one response.")
@click.option("--judge-labels", "judge_file",
              type=click.Path(path_type=Path, exists=True, dir_okay=False),
              help="A judge's labels in the same form: {judge: {item_id: label}} or "
              "{item_id: label}.")
@click.option("--judge", "judge", default=None,
              help="Which judge of --judge-labels; omitted when it holds several, every "
              "judge's verdicts, each naming its judge (audit them side by side).")
@click.option("--map", "maps", multiple=True, metavar="FROM=TO",
              help="Read the label FROM as TO (a, b, tie; or pass, fail, an integer).")
@click.option("--items", "items_out", required=True, type=click.Path(path_type=Path),
              help="Where to write the judge items with their annotators' labels (*.ndjson).")
@click.option("--recorded", "recorded_out", type=click.Path(path_type=Path),
              help="Where to write the judge's recorded verdicts (needs --judge-labels).")
@click.option("--texts", "texts_file",
              type=click.Path(path_type=Path, exists=True, dir_okay=False),
              help="The items' prompt and responses, joined by item id: {item_id: {prompt, "
              "response_a, response_b | response | conversation_a, conversation_b}}.")
@click.option("--text-field", "text_fields", multiple=True, metavar="KEY=FIELD",
              help="With --texts: the field holding KEY (prompt, response_a, response_b, "
              "response, conversation_a, conversation_b).")
@user_errors
def annotation_files(annotations: Path, kind: str, judge_file: Path | None,
                     judge: str | None, maps: tuple[str, ...], items_out: Path,
                     recorded_out: Path | None, texts_file: Path | None,
                     text_fields: tuple[str, ...]) -> None:
    """Convert {annotator: {item_id: label}} files (and a judge's labels) for judge-audit."""
    from metaeval.loaders.annotation_files import import_annotations, ndjson, parse_maps
    from metaeval.loaders.annotation_texts import read_texts
    from metaeval.loaders.annotation_texts import text_fields as field_names

    if recorded_out is not None and judge_file is None:
        raise InputError("--recorded: needs --judge-labels, the judge's labels")
    if text_fields and texts_file is None:
        raise InputError("--text-field: needs --texts, the file of the items' texts")
    refuse_inputs_as_outputs([("--items", items_out), ("--recorded", recorded_out)],
                             [("ANNOTATIONS", annotations, ""),
                              ("--judge-labels", judge_file, ""), ("--texts", texts_file, "")])
    pointwise = kind == "pointwise"
    texts = (read_texts(texts_file, field_names(text_fields), pointwise)
             if texts_file is not None else None)
    done = import_annotations(annotations, pointwise=pointwise,
                              extra=parse_maps(maps, pointwise), judge_file=judge_file,
                              judge=judge, texts=texts)
    write_atomic(items_out, ndjson(done.items), follow_links=True)
    untexted = sum(1 for item in done.items if texts is not None and item["id"] not in texts)
    echo(f"{len(done.items)} items -> {items_out}"
         + (f" ({untexted} with no text in --texts)" if untexted else ""))
    if recorded_out is not None:
        write_atomic(recorded_out, ndjson(done.recorded), follow_links=True)
        named = {r["judge"] for r in done.recorded if "judge" in r}
        echo(f"{len(done.recorded)} recorded verdicts"
             + (f" of {len(named)} judges" if named else "") + f" -> {recorded_out}"
             + (f" ({done.judge_only} on items no annotator labelled, left out)"
                if done.judge_only else ""))
