"""Make the screenshots of the HTML reports shown in docs/: ``python -m tests.screenshots``.

Runs the real commands (mutate on the fixture shop, meta-eval on meta_sets/,
judge-audit with the biased and the steady judge), opens each page in headless
Chromium (``tests.browser``) and writes docs/images/*.png. Needs Chromium and
the dev extra.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.browser import DEEP_TEXT, Browser, chromium
from tests.mutation.conftest import copy_shop

ROOT = Path(__file__).resolve().parents[1]
IMAGES = ROOT / "docs" / "images"
METAEVAL = str(Path(sys.executable).parent / "metaeval")
SURVIVOR = "shop/pricing.py::clamp_quantity::flip_comparison::0"

CLICK = """
((id) => {
  let hit = null;
  const walk = (n) => {
    if (hit) return;
    if (n.nodeType === 1 && n.getAttribute("data-mutant-id") === id
        && n.classList.contains("mutant-dot")) { hit = n; return; }
    if (n.shadowRoot) walk(n.shadowRoot);
    for (const c of n.childNodes) walk(c);
  };
  walk(document.body);
  hit.dispatchEvent(new MouseEvent("click", {bubbles: true, composed: true}));
  return true;
})(%s)
"""


def run(*args: str, cwd: Path = ROOT) -> None:
    subprocess.run([METAEVAL, *args], cwd=cwd, capture_output=True, text=True, timeout=300)


def shoot(binary: str, page: Path, out: Path, *, fragment: str = "", click: str = "") -> None:
    with Browser(binary, page.as_uri() + fragment, width=1240, height=1500) as browser:
        if click:
            browser.wait_for(f"{DEEP_TEXT.strip()}.includes('def clamp_quantity')")
            browser.evaluate(CLICK % json.dumps(click))
            time.sleep(1.5)  # the drawer slides open
            shot = browser.send("Page.captureScreenshot", format="png")
            from base64 import b64decode

            out.write_bytes(b64decode(shot["data"]))
        else:
            browser.screenshot(out, width=1240)
    print(f"wrote {out.relative_to(ROOT)}")


def shoot_annotators(binary: str, work: Path) -> None:
    """The judge-audit page's human side on the AltTest authors' MT-Bench data
    (../shared/data/alttest), at 1,280 px: only the annotators' section."""
    data = ROOT.parent / "shared" / "data" / "alttest" / "mtbench"
    if not (data / "human_annotations.json").is_file():
        print("skipped judge-audit-annotators.png: ../shared/data/alttest is not here")
        return
    (work / "pyproject.toml").write_text("[tool.metaeval]\n")
    run("judge-import", "annotations", str(data / "human_annotations.json"), "--judge-labels",
        str(data / "llm_annotations.json"), "--judge", "gpt-4o", "--items", "mt.ndjson",
        "--recorded", "gpt4o.jsonl", cwd=work)
    run("judge-audit", "--judge", "gpt-4o", "--items", "mt.ndjson", "--recorded", "gpt4o.jsonl",
        "--alt-epsilon", "0.2", "--no-cache", "--html", "audit.html", cwd=work)
    with Browser(binary, (work / "audit.html").as_uri(), width=1280, height=900) as browser:
        browser.wait_for("document.readyState === 'complete'")
        box = browser.evaluate("(() => { const r = document.getElementById('annotators')"
                               ".getBoundingClientRect(); return [r.top + window.scrollY, "
                               "r.height]; })()")
        browser.send("Emulation.setDeviceMetricsOverride", width=1280,
                     height=int(box[0] + box[1]) + 20, deviceScaleFactor=1, mobile=False)
        shot = browser.send("Page.captureScreenshot", format="png", captureBeyondViewport=True,
                            clip={"x": 0, "y": box[0] - 10, "width": 1280,
                                  "height": box[1] + 20, "scale": 1})
        from base64 import b64decode

        (IMAGES / "judge-audit-annotators.png").write_bytes(b64decode(shot["data"]))
    print("wrote docs/images/judge-audit-annotators.png")


def shoot_label(binary: str, work: Path) -> None:
    """The labelling page on this repository's near misses, two checks labelled."""
    from tests.label.serving import start_label

    process, url = start_label("meta_sets/support_near_misses.jsonl",
                               "meta_sets/judge/position.ndjson", "--labels",
                               str(work / "labels.jsonl"), "--annotator", "ana", cwd=ROOT)
    try:
        with Browser(binary, url, width=1240, height=1500) as browser:
            browser.wait_for("document.body.dataset.ready === '1'")
            for key in ("p", "p"):
                for kind in ("keyDown", "keyUp"):
                    browser.send("Input.dispatchKeyEvent", type=kind, key=key,
                                 **({"text": key} if kind == "keyDown" else {}))
            browser.wait_for("document.body.dataset.saved === '2'")
            browser.screenshot(IMAGES / "label.png", width=1240)
    finally:
        process.kill()
        process.communicate(timeout=10)
    print(f"wrote {(IMAGES / 'label.png').relative_to(ROOT)}")


def main() -> None:
    binary = chromium()
    if binary is None:
        sys.exit("Chromium is not installed (apt-get install chromium)")
    IMAGES.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        project = copy_shop(work)
        run("mutate", "--jobs", "2", "--no-cache", "--html", str(work / "mutation.html"),
            cwd=project)
        shoot(binary, work / "mutation.html", IMAGES / "mutation-report.png",
              fragment="#mutant/shop/pricing.py", click=SURVIVOR)
        run("meta-eval", "--html", str(work / "meta-eval.html"))
        shoot(binary, work / "meta-eval.html", IMAGES / "meta-eval.png")
        shoot_label(binary, work)
        alttest = work / "alttest"
        alttest.mkdir()
        shoot_annotators(binary, alttest)
        for spec in ("biased", "steady"):
            run("judge-audit", "--judge", spec, "--no-cache", "--html",
                str(work / f"{spec}.html"))
            shoot(binary, work / f"{spec}.html", IMAGES / f"judge-audit-{spec}.png")


if __name__ == "__main__":
    main()
