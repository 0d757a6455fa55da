"""Every bridge ships a parameters file under config/ that holds every
parameter it reads, each at its default: the bridge loads the file
(`--params-file`, as its launch file passes it) and, asked through
RFLYSIM_BRIDGE_WRITE_PARAMETERS, writes the parameters it read with their
defaults, which must be the file's, name for name and value for value.
RflySim's file serves all its executables; the launch file sets
`rflysim_config` itself, and `seq_id` picks a sensor per node.
docs/parameters.md's tables are likewise what the executables write through
RFLYSIM_BRIDGE_WRITE_PARAMETER_TABLE (scripts/parameter_tables.py)."""

import subprocess
import sys

import pytest
import yaml
from conftest import ROOT, executable

CONFIG = ROOT / "config" / "Config.json"
RFLYSIM = ["bridge", "camera_node", "lidar_node", "imu_node", "gimbal_node", "scene_node"]
FILES = {
    "auv_bridge.yaml": ["auv_bridge"],
    "gps_denied_bridge.yaml": ["gps_denied_bridge"],
    "aerosim_bridge.yaml": ["aerosim_bridge"],
    "rflysim_bridge.yaml": RFLYSIM,
}
NOT_IN_FILE = {"rflysim_config", "seq_id"}


def read_file(path):
    """name → value of a parameters file, those commented out (`# name: []`) included."""
    text = path.read_text()
    values = yaml.safe_load(text)["/**"]["ros__parameters"]
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("# ") and line.endswith(": []"):
            values[line[2:-4]] = []
    return values


def parameters_read(processes, tmp_path, name, params_file):
    out = tmp_path / f"{name}.yaml"
    args = [executable(name), "--ros-args", "--params-file", params_file, "-p", f"rflysim_config:={CONFIG}"]
    proc = processes.start(args, name=name, env={"RFLYSIM_BRIDGE_WRITE_PARAMETERS": str(out)})
    assert proc.wait(timeout=30) == 0, processes.output(proc)
    return read_file(out)


@pytest.mark.parametrize("file", FILES)
def test_the_shipped_parameters_file_loads_and_holds_every_parameter_at_its_default(processes, tmp_path, file):
    path = ROOT / "config" / file
    shipped = read_file(path)
    read = {}
    for name in FILES[file]:
        read.update(parameters_read(processes, tmp_path, name, path))
    read = {k: v for k, v in read.items() if k not in NOT_IN_FILE}
    assert sorted(set(read) - set(shipped)) == [], f"{file} lacks parameters its executables read"
    assert sorted(set(shipped) - set(read)) == [], f"{file} has parameters no executable reads"
    wrong = {k: (shipped[k], v) for k, v in read.items() if shipped[k] != v}
    assert wrong == {}, f"{file}: (file, default) differ"


def test_the_parameter_tables_in_docs_are_what_the_executables_write():
    run = subprocess.run([sys.executable, str(ROOT / "scripts" / "parameter_tables.py"), "--check"],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    rows = [line for line in (ROOT / "docs" / "parameters.md").read_text().splitlines()
            if line.startswith("| `") and line.count("|") >= 6]
    assert len(rows) > 100
    undescribed = [row.split("|")[1].strip() for row in rows if not row.split("|")[5].strip()]
    assert undescribed == [], "parameters without a description"


def test_the_former_name_of_decode_images_always_still_works_with_a_warning(processes, tmp_path):
    out = tmp_path / "p.yaml"
    proc = processes.start([executable("auv_bridge"), "--ros-args", "-p", "decode_jpeg_always:=true"],
                           env={"RFLYSIM_BRIDGE_WRITE_PARAMETERS": str(out)})
    assert proc.wait(timeout=30) == 0, processes.output(proc)
    assert ("parameter `decode_jpeg_always` is now `decode_images_always`; the old name still works"
            in processes.output(proc))
