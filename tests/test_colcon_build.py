"""`colcon build` of a workspace holding this repository under `src/` builds the
messages and the Rust executables in one go and installs them where ROS 2
tools look; the installed executables then talk to rclpy over DDS.

Slow on a cold cache (a build of r2r); its cargo target directory is kept in
`.cache/colcon-target` so that warm runs take seconds. It builds cargo's dev
profile without debug information: the release build of the same code is
scripts/test.sh's own, and an unoptimised one takes half the time.
"""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import ROOT
from rclpy.qos import QoSProfile, ReliabilityPolicy

from rflysim_bridge.msg import CameraStatus
from rflysim_scenario import sensor

CACHE = ROOT / ".cache"
WORKSPACE = CACHE / "colcon-ws"


def without_dev_prefixes(value: str) -> str:
    # The messages-only prefix that scripts/setup.sh builds for plain cargo
    # would shadow (or duplicate) the package colcon builds here.
    return ":".join(p for p in value.split(":") if p and "prefix-rflysim_bridge" not in p)


def colcon_env():
    env = dict(os.environ)
    for var in ("AMENT_PREFIX_PATH", "CMAKE_PREFIX_PATH", "LD_LIBRARY_PATH", "PYTHONPATH"):
        env[var] = without_dev_prefixes(env.get(var, ""))
    env["CARGO_PROFILE_DEV_DEBUG"] = "false"
    return env


def copy_checkout(dest: Path):
    """What a user gets from `git clone` into `src/`: tracked and new files, no build output."""
    files = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT, check=True, capture_output=True,
    ).stdout.decode().split("\0")
    if dest.exists():
        shutil.rmtree(dest)
    for rel in filter(None, files):
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)


@pytest.fixture(scope="module")
def colcon_install():
    package_dir = WORKSPACE / "src" / "rflysim_bridge"
    copy_checkout(package_dir)
    result = subprocess.run(
        [
            "colcon", "build", "--event-handlers", "console_direct+",
            "--cmake-args", "-DBUILD_TESTING=OFF", "-DRFLYSIM_CARGO_PROFILE=dev",
            f"-DRFLYSIM_CARGO_TARGET_DIR={CACHE / 'colcon-target'}",
        ],
        cwd=WORKSPACE, env=colcon_env(), capture_output=True, text=True, timeout=1800,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    return WORKSPACE / "install" / "rflysim_bridge"


@pytest.mark.slow
def test_colcon_installs_messages_executables_launch_and_config(colcon_install):
    prefix = colcon_install
    for exe in ("bridge", "gimbal_node", "rflysim_sim"):
        assert (prefix / "lib" / "rflysim_bridge" / exe).stat().st_mode & 0o111
    # Test fixtures are built for the tests, never installed.
    assert not (prefix / "lib" / "rflysim_bridge" / "roundtrip_publisher").exists()
    for exe in ("auv_bridge", "auv_sim"):  # the ZeroMQ AUV simulator's, with libzmq built by cargo
        assert (prefix / "lib" / "rflysim_bridge" / exe).stat().st_mode & 0o111
    assert (prefix / "share" / "rflysim_bridge" / "launch" / "auv.launch.py").exists()
    assert list((prefix / "share" / "rflysim_bridge" / "msg").glob("CameraStatus.*"))
    assert (prefix / "share" / "ament_index" / "resource_index" / "packages" / "rflysim_bridge").exists()
    assert (prefix / "share" / "rflysim_bridge" / "launch").is_dir()
    assert (prefix / "share" / "rflysim_bridge" / "config").is_dir()
    assert (prefix / "share" / "rflysim_bridge" / "package.xml").exists()


@pytest.mark.slow
def test_installed_executables_reach_rclpy(colcon_install, collector, processes, tmp_path):
    # The installed emulator echoes the gimbal's state; the installed gimbal
    # node turns the echo into this package's own message type.
    cfg = tmp_path / "Config.json"
    cfg.write_text(json.dumps({"VisionSensors": [sensor(6, 9, 2, port=43906, width=64, height=36)]}))
    status = collector.subscribe(
        CameraStatus, "/colcon_test/rflysim/sensor6/camera/status",
        QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE),
    )
    lib = colcon_install / "lib" / "rflysim_bridge"
    # Run them the way a ROS user does: from the sourced install space.
    source = f"source {WORKSPACE / 'install' / 'setup.bash'} && exec "
    processes.start(["bash", "-c", source + f"{lib / 'rflysim_sim'} --config {cfg} --window-id 18 --stats 0 "
                     "--gimbal-target 127.0.0.1:43918"], name="installed_rflysim_sim", env=colcon_env())
    processes.start(["bash", "-c", source + f"{lib / 'gimbal_node'} --ros-args -r __ns:=/colcon_test "
                     f"-p rflysim_config:={cfg} -p window_id:=18 -p status_port:=43918 -p status_multicast:=false"],
                    name="installed_gimbal_node", env=colcon_env())
    msgs = collector.wait_for(status, 2, timeout=30)
    assert (msgs[0].id, msgs[0].width, msgs[0].height) == (6, 64, 36)
    assert msgs[0].camera_params.att_type_valid_mask == msgs[0].camera_params.PLANE_TO_CAM_VALID
