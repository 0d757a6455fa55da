#!/usr/bin/env python3
"""Writes benchmark output into BENCHMARKS.md: for each section named, the
text between `<!-- bench:NAME -->` and `<!-- /bench:NAME -->` becomes that
section's output (OUT_DIR/NAME.txt, as scripts/bench.sh saved it) with the
commit, date and machine it was taken on. Other sections are left as they
are, so a section can be re-run alone.

Usage: bench_report.py BENCHMARKS.md OUT_DIR SECTION...
"""

import datetime
import os
import re
import subprocess
import sys
from pathlib import Path


def machine():
    model = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} cores"


def commit():
    def git(*args):
        return subprocess.run(["git", *args], capture_output=True, text=True).stdout.strip()
    sha = git("rev-parse", "--short", "HEAD") or "unknown"
    # The report's own file is not the code measured.
    dirty = git("status", "--porcelain", "--untracked-files=no", "--", ".", ":!BENCHMARKS.md")
    return f"{sha} with uncommitted changes" if dirty else sha


def main():
    doc_path, out_dir, sections = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3:]
    doc = doc_path.read_text()
    taken = (f"Taken at commit `{commit()}` on {datetime.date.today().isoformat()}, "
             f"{machine()}; reproduce with `scripts/bench.sh {{name}}`.")
    for name in sections:
        # Paths into this checkout are the reader's own: shown relative to it.
        output = (out_dir / f"{name}.txt").read_text().rstrip().replace(str(Path.cwd()) + "/", "")
        pattern = re.compile(rf"(<!-- bench:{re.escape(name)} -->\n).*?(<!-- /bench:{re.escape(name)} -->)", re.S)
        if not pattern.search(doc):
            sys.exit(f"{doc_path}: no markers for section {name}")
        block = taken.format(name=name) + "\n\n```text\n" + output + "\n```\n"
        doc = pattern.sub(lambda m: m.group(1) + block + m.group(2), doc)
        print(f"[bench] {doc_path}: section {name} updated")
    doc_path.write_text(doc)


if __name__ == "__main__":
    main()
