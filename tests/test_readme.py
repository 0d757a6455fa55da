"""Every command README.md shows is run somewhere: its `ros2 launch` lines here
(through the recording launch double, tests/launch_double: the `ros2 launch`
runtime has no wheels), the set-up, test and demo scripts by scripts/test.sh,
the colcon lines by tests/test_colcon_build.py. A README command that none of
them runs fails this test; one that stops working fails where it runs."""

import re
import shlex
import time

import pytest
from conftest import ROOT
from rviz_stand_in import start_launch

README = ROOT / "README.md"

# Run by scripts/test.sh (itself, the demo it runs, the inner loop it uses).
BY_TEST_SH = {
    "scripts/test.sh", "scripts/test.sh --quick", ".ci/run", "bash .ci/run", "scripts/demo.sh",
    "scripts/demo.sh 10", "scripts/setup.sh", "source .cache/env.sh", "cargo build --release",
    "cargo test -p rflysim_proto",
}
# `ros2 run rflysim_bridge status`: tests/test_control_plane.py runs the view.
BY_OTHER_TESTS = {"ros2 run rflysim_bridge status"}
# Run by tests/test_colcon_build.py (a workspace with this repository in src/).
BY_COLCON_TEST = ("cd ", "git clone ", "colcon build", "source install/setup.bash", "sudo apt install ",
                  "sudo apt-get install ", "source /opt/ros/")


def readme_commands():
    """The shell lines of README's bash/sh/console code blocks, continuation lines joined."""
    commands = []
    for block in re.findall(r"```(?:bash|sh|shell|console)\n(.*?)```", README.read_text(), flags=re.S):
        text = re.sub(r"\\\n\s*", " ", block)
        for line in text.splitlines():
            line = re.sub(r"^\$ ", "", line.split(" #", 1)[0].strip())
            if line and not line.startswith("#"):
                commands.append(line)
    return commands


def rviz_config(command):
    """`rviz2 -d …/config/<name>.rviz`: rviz2 is played by tests/rviz_stand_in.py with that config in the
    launch tests (rviz2 itself cannot run here); the config must be one the package installs."""
    m = re.fullmatch(r"rviz2 -d \$\(ros2 pkg prefix rflysim_bridge\)/share/rflysim_bridge/config/(\w+\.rviz)", command)
    return m is not None and (ROOT / "config" / m.group(1)).is_file()


def launch_lines():
    return [c for c in readme_commands() if c.startswith("ros2 launch rflysim_bridge ")]


def test_every_readme_command_is_run_by_a_test_or_scripts_test_sh():
    commands = readme_commands()
    assert commands, "README shows commands"
    unrun = [c for c in commands
             if c not in BY_TEST_SH | BY_OTHER_TESTS and not c.startswith(BY_COLCON_TEST)
             and c not in launch_lines() and not rviz_config(c)]
    assert not unrun, f"README commands no test runs: {unrun}"


@pytest.mark.parametrize("command", [pytest.param(c, marks=pytest.mark.broker) if "broker:=true" in c else c
                                     for c in launch_lines()])
def test_readme_launch_lines_start_their_nodes(processes, command):
    words = shlex.split(command)
    launch_file = words[3]
    overrides = dict(w.split(":=", 1) for w in words[4:])
    if overrides.get("config", "").startswith("/path/"):
        overrides["config"] = str(ROOT / "config" / "Config.json")  # the README's placeholder
    started = start_launch(processes, launch_file, overrides)
    assert started, f"{command}: starts nothing of this package"
    time.sleep(3.0)
    for p in started:
        # MAVROS is not installed here: its launcher's own tests use a fake `ros2`.
        if "mavros_launcher" in str(p.args[0]):
            continue
        assert p.poll() is None, f"{command}: {p.args[0]} ended:\n{processes.output(p)}"
