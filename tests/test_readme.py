"""Every command README.md shows is run somewhere: its `ros2 launch` lines here
(through the recording launch double, tests/launch_double: the `ros2 launch`
runtime has no wheels), and after each emulator launch the `ros2 topic hz`,
`ros2 topic echo` and `ros2 service call` lines of its block (through
tests/ros2_cli_double.py), the rate each `hz` line promises included; the
set-up, test and demo scripts by scripts/test.sh, the colcon lines by
tests/test_colcon_build.py. A README command that none of them runs fails this
test; one that stops working fails where it runs."""

import re
import shlex
import time

import pytest
from conftest import ROOT
from rviz_stand_in import start_launch

import ros2_cli_double
from simulation_interfaces.msg import Result

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
BY_COLCON_TEST = ("cd ", "mkdir -p ~/ros2_ws/src", "git clone ", "colcon build", "source install/setup.bash",
                  "sudo apt install ", "sudo apt-get install ", "source /opt/ros/")
# Run after their block's emulator launch line, by test_readme_blocks_show_what_they_promise.
BY_CLI_DOUBLE = ("ros2 topic hz ", "ros2 topic echo ", "ros2 service call ")


def readme_blocks():
    """Each of README's bash/sh/console code blocks: its shell lines, continuation lines joined, as
    (command, comment) pairs."""
    blocks = []
    for block in re.findall(r"```(?:bash|sh|shell|console)\n(.*?)```", README.read_text(), flags=re.S):
        text = re.sub(r"\\\n\s*", " ", block)
        lines = []
        for line in text.splitlines():
            command, _, comment = line.partition(" #")
            command = re.sub(r"^\$ ", "", command.strip())
            if command and not command.startswith("#"):
                lines.append((command, comment.strip()))
        blocks.append(lines)
    return blocks


def readme_commands():
    return [command for block in readme_blocks() for command, _ in block]


def rviz_config(command):
    """`rviz2 -d …/config/<name>.rviz`: rviz2 is played by tests/rviz_stand_in.py with that config in the
    launch tests (rviz2 itself is not installable from PyPI); the config must be one the package installs."""
    m = re.fullmatch(r"rviz2 -d \$\(ros2 pkg prefix rflysim_bridge\)/share/rflysim_bridge/config/(\w+\.rviz)", command)
    return m is not None and (ROOT / "config" / m.group(1)).is_file()


def launch_lines():
    return [c for c in readme_commands() if c.startswith("ros2 launch rflysim_bridge ")]


def test_every_readme_command_is_run_by_a_test_or_scripts_test_sh():
    commands = readme_commands()
    assert commands, "README shows commands"
    shown = {c for _, lines in emulator_blocks() for c, _ in lines}
    unrun = [c for c in commands
             if c not in BY_TEST_SH | BY_OTHER_TESTS and not c.startswith(BY_COLCON_TEST)
             and c not in launch_lines() and not rviz_config(c) and not (c.startswith(BY_CLI_DOUBLE) and c in shown)]
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


def emulator_blocks():
    """(the block's emulator launch line, its `ros2` command-line lines) for every block that has both."""
    found = []
    for block in readme_blocks():
        launches = [c for c, _ in block if c.startswith("ros2 launch rflysim_bridge ") and "emulator:=true" in c]
        cli = [(c, comment) for c, comment in block if c.startswith(BY_CLI_DOUBLE)]
        if launches and cli:
            found.append((launches[0], cli))
    return found


@pytest.mark.parametrize("launch, lines", [
    pytest.param(launch, lines, marks=[pytest.mark.broker] if "broker:=true" in launch else [], id=launch.split()[3])
    for launch, lines in emulator_blocks()])
def test_readme_blocks_show_what_they_promise(processes, collector, launch, lines):
    """Each `ros2 topic hz` line's rate (its comment's "N Hz", within 25 %), a message for each
    `ros2 topic echo`, and for each `ros2 service call` an answer whose `result` (where it has one) is OK."""
    words = shlex.split(launch)
    start_launch(processes, words[3], dict(w.split(":=", 1) for w in words[4:]))
    for command, comment in lines:
        verb, *args = ros2_cli_double.parse(command)
        if verb == "topic hz":
            promised = re.match(r"(\d+(?:\.\d+)?) Hz", comment)
            assert promised, f"{command}: its comment says no rate"
            rate = ros2_cli_double.topic_hz(collector, args[0])
            want = float(promised.group(1))
            assert abs(rate - want) <= 0.25 * want, f"{command}: {rate:.1f} Hz, README says {want:g}"
        elif verb == "topic echo":
            topic = args[0]
            key = collector.subscribe(ros2_cli_double.topic_type(collector.node, topic), topic, key=f"echo {topic}")
            collector.wait_for(key, 1, timeout=20.0)
        else:
            response = ros2_cli_double.service_call(collector.node, *args)
            result = getattr(response, "result", None)
            if result is not None and hasattr(result, "result"):
                assert result.result == Result.RESULT_OK, f"{command}: {result.result} {result.error_message}"
            if hasattr(response, "success"):
                assert response.success, f"{command}: {response.message}"
