"""What forking a Python process costs, by what it has imported.

`metaeval mutate` forks its warm process once per mutant, so each mutant pays
for one fork (in the warm process, on the mutant's clock) and one exit (the
child tearing down its copy, on a core the other children need). Both grow
with the process: Linux copies the page tables of every private page at fork
and drops them at exit. This script measures that floor for a process that
has imported a given set of modules, the same way for each set, so a run's
"ms forking the warm process" can be read against it.

    python3 benchmarks/fork_cost.py                       # pytest alone, then with scikit-learn
    python3 benchmarks/fork_cost.py --sets "pytest" "pytest,numpy" --rounds 100

Each set is measured in a fresh interpreter (``sys.executable``, so run it
with the Python whose packages you want), after ``gc.freeze()`` as the warm
runner does. Printed per set: resident MiB, memory mappings, and the median
over the rounds of the fork alone (parent side) and of fork, child exit and
reap together, with nothing else running in the process. Other work on the
machine slows both: compare sets from the same run.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

DEFAULT_SETS = ("pytest", "pytest,sklearn.metrics,metaeval.cli")

_PROBE = r"""
import gc, json, os, sys, time
for name in sys.argv[2].split(","):
    __import__(name)
gc.collect()
gc.freeze()
forks, cycles = [], []
for _ in range(int(sys.argv[1])):
    before = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    forked = time.perf_counter()
    os.waitpid(pid, 0)
    forks.append(forked - before)
    cycles.append(time.perf_counter() - before)
with open("/proc/self/statm") as f:
    resident = int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
with open("/proc/self/maps") as f:
    mappings = sum(1 for _ in f)
print(json.dumps({"forks": forks, "cycles": cycles, "resident": resident,
                  "mappings": mappings}))
"""


def measure(modules: str, rounds: int) -> dict[str, float]:
    """One fresh interpreter that imports ``modules`` and forks ``rounds`` times."""
    done = subprocess.run([sys.executable, "-c", _PROBE, str(rounds), modules],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"importing {modules} failed:\n{done.stderr[-2000:]}")
    data = json.loads(done.stdout.splitlines()[-1])
    return {"resident_mib": data["resident"] / 2**20, "mappings": data["mappings"],
            "fork_ms": 1000 * statistics.median(data["forks"]),
            "fork_exit_ms": 1000 * statistics.median(data["cycles"])}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", nargs="+", default=list(DEFAULT_SETS),
                        help="comma-separated modules to import, one set per argument")
    parser.add_argument("--rounds", type=int, default=50, help="forks per set (median shown)")
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error(f"--rounds must be at least 1, got {args.rounds}")
    print(f"{'imports':<45} {'resident':>9} {'mappings':>9} {'fork':>9} {'fork+exit':>10}")
    for modules in args.sets:
        r = measure(modules, args.rounds)
        print(f"{modules:<45} {r['resident_mib']:>5.0f} MiB {r['mappings']:>9.0f} "
              f"{r['fork_ms']:>6.2f} ms {r['fork_exit_ms']:>7.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
