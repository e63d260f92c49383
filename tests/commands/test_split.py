"""``metaeval split``: the held-out set is the same for the same seed on any machine
(computed here from the seed and the ids alone), each stratum of category and
label keeps its share, a bad line or an existing split is refused, and the split
file is read back as data."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from metaeval.cli import main
from metaeval.errors import InputError
from metaeval.loaders.splits import read_split

CATEGORIES = {"math": 40, "writing": 25, "code": 15}


def items(tmp_path: Path) -> Path:
    lines: list[dict[str, str | None]] = []
    for category, count in CATEGORIES.items():
        for n in range(count):
            label = "pass" if n % 4 else "fail"  # a quarter fail in every category
            lines.append({"id": f"{category}-{n}", "prompt": "q", "response": "r",
                          "label": label, "category": category})
    lines.append({"id": "unlabelled", "prompt": "q", "response": "r", "label": None})
    path = tmp_path / "items.ndjson"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def split(tmp_path: Path, *args: str) -> Result:
    (tmp_path / "pyproject.toml").write_text("[tool.metaeval]\n")
    return CliRunner().invoke(main, ["split", *args], catch_exceptions=False)


def test_the_same_seed_gives_the_same_sets_and_each_stratum_keeps_its_share(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    path = items(tmp_path)
    result = split(tmp_path, str(path), "--held-out", "0.2", "--seed", "42")
    assert result.exit_code == 0, result.output
    assert result.output == ("80 labelled: 64 golden, 16 held out (6 strata of category and "
                             f"label; seed 42) -> {tmp_path / 'items.split.json'}; 1 "
                             "unlabelled, not split\n")
    drawn = read_split(tmp_path / "items.split.json")
    # Independently: per (category, label), the round(n * 0.2) ids with the lowest
    # sha256 of "42\0id". No machine, run or file order enters it.
    expected: set[str] = set()
    for category, count in CATEGORIES.items():
        for label in ("pass", "fail"):
            ids = [f"{category}-{n}" for n in range(count)
                   if ("pass" if n % 4 else "fail") == label]
            ids.sort(key=lambda i: hashlib.sha256(f"42\0{i}".encode()).hexdigest())
            expected.update(ids[:round(len(ids) * 0.2)])
    assert drawn.held_out == expected
    held = Counter((i.rsplit("-", 1)[0], "pass" if int(i.rsplit("-", 1)[1]) % 4 else "fail")
                   for i in drawn.held_out)
    assert held == {("math", "pass"): 6, ("math", "fail"): 2, ("writing", "pass"): 4,
                    ("writing", "fail"): 1, ("code", "pass"): 2, ("code", "fail"): 1}
    # The file's order does not enter the draw; another seed draws other sets.
    lines = path.read_text().splitlines()
    path.write_text("\n".join(reversed(lines)) + "\n")
    again = split(tmp_path, str(path), "-o", "again.split.json")
    assert again.exit_code == 0 and read_split(tmp_path / "again.split.json") == drawn
    other = split(tmp_path, str(path), "--seed", "7", "-o", "seven.split.json")
    assert other.exit_code == 0
    assert read_split(tmp_path / "seven.split.json").held_out != drawn.held_out


def test_an_existing_split_or_a_bad_line_is_refused(tmp_path: Path) -> None:
    path = items(tmp_path)
    assert split(tmp_path, str(path)).exit_code == 0
    before = (tmp_path / "items.split.json").read_bytes()
    again = split(tmp_path, str(path), "--seed", "1")
    assert again.exit_code == 2
    assert "a split exists; a split is drawn once" in again.output
    assert (tmp_path / "items.split.json").read_bytes() == before
    path.write_text(path.read_text() + '{"id": "x", "prompt": 3}\n')
    bad = split(tmp_path, str(path), "-o", "new.split.json")
    assert bad.exit_code == 2 and ":82: " in bad.output
    assert not (tmp_path / "new.split.json").exists()
    assert split(tmp_path, str(path), "--held-out", "1.5", "-o", "x.json").exit_code == 2


def test_a_split_file_is_data(tmp_path: Path) -> None:
    path = tmp_path / "s.split.json"
    good = {"version": 1, "seed": 1, "held_out_fraction": 0.2, "sources": ["i.ndjson"],
            "golden": ["a", "b"], "held_out": ["c"]}
    path.write_text(json.dumps(good))
    assert read_split(path).held_out == {"c"}
    for bad, message in (({"held_out": ["a"]}, "id 'a' is both golden and held out"),
                         ({"seed": -1}, "seed: got -1"), ({"golden": ["a", "a"]}, "twice"),
                         ({"held_out_fraction": 1.5}, "held_out_fraction: got 1.5"),
                         ({"extra": 1}, "extra: unknown key")):
        path.write_text(json.dumps({**good, **bad}))
        with pytest.raises(InputError, match=message):
            read_split(path)
