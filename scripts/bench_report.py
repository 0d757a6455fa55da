#!/usr/bin/env python3
"""Writes benchmark output into BENCHMARKS.md: for each section named, the
text between `<!-- bench:NAME -->` and `<!-- /bench:NAME -->` becomes that
section's output (OUT_DIR/NAME.txt, as scripts/bench.sh saved it), folded in
`<details>`, with the commit and date it was taken on; the block between
`<!-- bench:machine -->` markers becomes the machine's description. Other
sections are left as they are, so a section can be re-run alone.

Usage: bench_report.py BENCHMARKS.md OUT_DIR SECTION...
"""

import datetime
import os
import re
import subprocess
import sys
from pathlib import Path


def read(path):
    try:
        return Path(path).read_text()
    except OSError:
        return ""


def machine():
    model = next((line.split(":", 1)[1].strip() for line in read("/proc/cpuinfo").splitlines()
                  if line.startswith("model name")), "unknown CPU")
    return f"{model}, {os.cpu_count()} cores"


def machine_block():
    """The machine the figures come from, as a table."""
    mem_kib = next((int(line.split()[1]) for line in read("/proc/meminfo").splitlines()
                    if line.startswith("MemTotal:")), 0)
    rows = [
        ("CPU", machine()),
        ("memory", f"{mem_kib / 1024 / 1024:.1f} GiB"),
        ("kernel", os.uname().release),
        ("ROS 2", os.environ.get("ROS_DISTRO", "unknown") + " (" + os.environ.get("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp") + ")"),
        ("net.core.rmem_max", read("/proc/sys/net/core/rmem_max").strip() + " bytes (the 4K section raises it for its run)"),
        ("taken", f"{datetime.date.today().isoformat()}, commit `{commit()}`"),
    ]
    return "| | |\n|---|---|\n" + "".join(f"| {k} | {v} |\n" for k, v in rows)


def commit():
    def git(*args):
        return subprocess.run(["git", *args], capture_output=True, text=True).stdout.strip()
    sha = git("rev-parse", "--short", "HEAD") or "unknown"
    # Documents (this report among them) are not the code measured.
    dirty = git("status", "--porcelain", "--untracked-files=no", "--", ".", ":!*.md")
    return f"{sha} with uncommitted changes" if dirty else sha


def main():
    doc_path, out_dir, sections = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3:]
    doc = doc_path.read_text()
    taken = (f"Taken at commit `{commit()}` on {datetime.date.today().isoformat()} (the machine above); "
             f"reproduce with `scripts/bench.sh {{name}}`.")
    for name in sections:
        # Paths into this checkout are the reader's own: shown relative to it.
        output = (out_dir / f"{name}.txt").read_text().rstrip().replace(str(Path.cwd()) + "/", "")
        pattern = re.compile(rf"(<!-- bench:{re.escape(name)} -->\n).*?(<!-- /bench:{re.escape(name)} -->)", re.S)
        if not pattern.search(doc):
            sys.exit(f"{doc_path}: no markers for section {name}")
        block = (taken.format(name=name) + "\n\n<details><summary>The benchmark's output</summary>\n\n```text\n"
                 + output + "\n```\n\n</details>\n")
        doc = pattern.sub(lambda m: m.group(1) + block + m.group(2), doc)
        print(f"[bench] {doc_path}: section {name} updated")
    machine_markers = re.compile(r"(<!-- bench:machine -->\n).*?(<!-- /bench:machine -->)", re.S)
    if machine_markers.search(doc):
        doc = machine_markers.sub(lambda m: m.group(1) + machine_block() + m.group(2), doc)
    doc_path.write_text(doc)


if __name__ == "__main__":
    main()
