"""GPT-4 on LLMBar Natural, audited from its recorded verdicts; the numbers must be
what scikit-learn gives on vectors read straight from the source files."""

from __future__ import annotations

import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from click.testing import CliRunner
from sklearn.metrics import accuracy_score, cohen_kappa_score

from metaeval.cli import main

# Beside the repository as ../shared; METAEVAL_LLMBAR points elsewhere (a worktree).
LLMBAR = Path(os.environ.get("METAEVAL_LLMBAR", "")
              or Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "llmbar")
pytestmark = pytest.mark.skipif(not (LLMBAR / "Natural.dataset.json").is_file(),
                                reason="../shared/data/llmbar is not beside the repository")


@pytest.mark.parametrize("strategy", ["Vanilla", "Swap"])
def test_llmbar_natural_audit_matches_scikit_learn(tmp_path: Path, strategy: str) -> None:
    dataset = LLMBAR / "Natural.dataset.json"
    result = LLMBAR / f"Natural.GPT-4.{strategy}.result.json"
    items, recorded = tmp_path / "items.ndjson", tmp_path / "recorded.jsonl"
    runner = CliRunner()
    converted = runner.invoke(main, ["judge-import-llmbar", str(dataset), "--result",
                                     str(result), "--items", str(items), "--recorded",
                                     str(recorded)])
    assert converted.exit_code == 0, converted.output
    audit = runner.invoke(main, ["judge-audit", "--judge", f"gpt-4-{strategy.lower()}",
                                 "--items", str(items), "--recorded", str(recorded),
                                 "--format", "json"])
    assert audit.exit_code in (0, 1), audit.output
    document = json.loads(audit.output)

    # The other side, straight from LLMBar's files: labels 1/2, winners "1"/"2".
    runs = json.loads(result.read_text())
    human = [run["label"] for run in runs]
    # The "Swap" strategy re-asks pairs its two orders split on: the last round decides.
    vanilla = [int(run["results"][-1]["swap = False"]["winner"]) for run in runs]
    swapped = [int(run["results"][-1]["swap = True"]["winner"]) for run in runs]
    pairwise = document["agreement"]["pairwise"]
    assert pairwise["n"] == len(human) == 100
    for order, judged in (("ab", vanilla), ("ba", swapped)):
        assert pairwise["orders"][order]["accuracy"] == pytest.approx(
            accuracy_score(human, judged), abs=1e-4)
        assert pairwise["orders"][order]["kappa"]["value"] == pytest.approx(
            cohen_kappa_score(human, judged), abs=1e-4)
    consistency = sum(a == b for a, b in zip(vanilla, swapped, strict=True)) / len(human)
    assert pairwise["consistency"] == pytest.approx(consistency, abs=1e-4)
    assert document["calls"] == {"made": 0, "cached": 0, "failed": 0, "failures": []}
    assert document["controls"]["ok"] is True


def _replay_server(template: str) -> tuple[ThreadingHTTPServer, str]:
    """GPT-4's raw LLMBar replies ("Output (a)"/"Output (b)") served on loopback, each
    for the prompt the template renders for that pair in that order."""
    from metaeval.judges.reply import render

    dataset = json.loads((LLMBAR / "Natural.dataset.json").read_text())
    runs = json.loads((LLMBAR / "Natural.GPT-4.Vanilla.result.json").read_text())
    replies = {}
    for item, run in zip(dataset, runs, strict=True):
        for key, (first, second) in (("swap = False", ("output_1", "output_2")),
                                     ("swap = True", ("output_2", "output_1"))):
            prompt = render(template, {"prompt": item["input"], "response_a": item[first],
                                       "response_b": item[second]})
            replies[prompt] = run["results"][-1][key]["completion"][0]

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            text = replies.get(body["messages"][0]["content"], "no such prompt")
            data = json.dumps({"choices": [{"message": {"content": text}}]}).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/v1"


TEMPLATE = ("Select the Output (a) or Output (b) that is better.\n# Instruction:\n{prompt}\n"
            "# Output (a):\n{response_a}\n# Output (b):\n{response_b}\n")


def test_one_order_log_and_the_raw_replies_read_by_a_pattern(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    items, recorded = tmp_path / "items.ndjson", tmp_path / "recorded.jsonl"
    runner = CliRunner()
    runner.invoke(main, ["judge-import-llmbar", str(LLMBAR / "Natural.dataset.json"),
                         "--result", str(LLMBAR / "Natural.GPT-4.Vanilla.result.json"),
                         "--items", str(items), "--recorded", str(recorded)])
    lines = recorded.read_text().splitlines()
    one = tmp_path / "ab.jsonl"
    one.write_text("".join(line + "\n" for line in lines if json.loads(line)["order"] == "ab"))
    logged = json.loads(runner.invoke(main, ["judge-audit", "--judge", "gpt-4", "--items",
                                             str(items), "--recorded", str(one), "--format",
                                             "json"]).output)
    both = json.loads(runner.invoke(main, ["judge-audit", "--judge", "gpt-4", "--items",
                                           str(items), "--recorded", str(recorded),
                                           "--format", "json"]).output)
    assert list(logged["agreement"]["pairwise"]["orders"]) == ["ab"]
    assert (logged["agreement"]["unscored"], logged["agreement"]["verdicts"]) == (0, 100)
    assert logged["position"]["status"] == "not run"
    assert logged["agreement"]["pairwise"]["orders"]["ab"] == \
        both["agreement"]["pairwise"]["orders"]["ab"]

    server, url = _replay_server(TEMPLATE)
    try:
        (tmp_path / "pair.txt").write_text(TEMPLATE)
        (tmp_path / "pyproject.toml").write_text(
            f'[tool.metaeval.judges.gpt4]\ntype = "http"\nbase_url = "{url}"\n'
            'model = "gpt-4"\nprompt_template = "pair.txt"\n'
            "reply = 'Output \\((?P<winner>[ab])\\)'\n")
        monkeypatch.chdir(tmp_path)
        # The replay server knows LLMBar's own pairs only: no generated probes.
        live = json.loads(runner.invoke(main, ["judge-audit", "--judge", "gpt4", "--items",
                                               str(items), "--no-cache", "--probes", "files",
                                               "--format", "json"]).stdout)
    finally:
        server.shutdown()
        server.server_close()
    assert live["calls"] == {"made": 200, "cached": 0, "failed": 0, "failures": []}
    assert live["agreement"]["pairwise"] == both["agreement"]["pairwise"]
    assert live["position"]["headline"] == both["position"]["headline"]


@pytest.mark.slow
@pytest.mark.parametrize("dataset", ["Natural", "Adversarial_Manual"])
def test_generated_probes_on_llmbar_find_the_biased_fake_and_clear_the_steady_one(
        tmp_path: Path, dataset: str) -> None:
    """Real pairs, no probe file: the probes are generated from LLMBar's labelled
    pairs, and both planted controls behave on every one of them."""
    items = tmp_path / "items.ndjson"
    runner = CliRunner()
    converted = runner.invoke(main, ["judge-import-llmbar", str(LLMBAR / f"{dataset}.dataset.json"),
                                     "--items", str(items)])
    assert converted.exit_code == 0, converted.output
    for judge, status in (("biased", "FOUND"), ("steady", "clean")):
        audit = runner.invoke(main, ["judge-audit", "--judge", judge, "--items", str(items),
                                     "--no-cache", "--format", "json"])
        document = json.loads(audit.stdout)
        assert document["controls"]["ok"], document["controls"]
        assert document["probes"]["source"] == "generated"
        for probe in ("pairwise_length", "pairwise_injection"):
            assert document[probe]["status"] == status, (judge, document[probe]["headline"])
        kinds = document["pairwise_injection"]["by_kind"]
        assert len(kinds) == 8 and {k["status"] for k in kinds.values()} == {status}
