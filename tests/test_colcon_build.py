"""`colcon build` of a workspace holding this repository under `src/` builds the
messages and the Rust executables in one go and installs them where ROS 2
tools look; the installed executable then talks to rclpy over DDS.

Slow on a cold cache (a release build of r2r); its cargo target directory is
kept in `.cache/colcon-target` so that warm runs take seconds.
"""

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import ROOT
from rclpy.qos import QoSProfile, ReliabilityPolicy

from rflysim_bridge.msg import CameraStatus

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
            "--cmake-args", "-DBUILD_TESTING=OFF",
            f"-DRFLYSIM_CARGO_TARGET_DIR={CACHE / 'colcon-target'}",
        ],
        cwd=WORKSPACE, env=colcon_env(), capture_output=True, text=True, timeout=1800,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    return WORKSPACE / "install" / "rflysim_bridge"


@pytest.mark.slow
def test_colcon_installs_messages_executables_launch_and_config(colcon_install):
    prefix = colcon_install
    assert (prefix / "lib" / "rflysim_bridge" / "roundtrip_publisher").stat().st_mode & 0o111
    for exe in ("auv_bridge", "auv_sim"):  # the ZeroMQ AUV simulator's, with libzmq built by cargo
        assert (prefix / "lib" / "rflysim_bridge" / exe).stat().st_mode & 0o111
    assert (prefix / "share" / "rflysim_bridge" / "launch" / "auv.launch.py").exists()
    assert list((prefix / "share" / "rflysim_bridge" / "msg").glob("CameraStatus.*"))
    assert (prefix / "share" / "ament_index" / "resource_index" / "packages" / "rflysim_bridge").exists()
    assert (prefix / "share" / "rflysim_bridge" / "launch").is_dir()
    assert (prefix / "share" / "rflysim_bridge" / "config").is_dir()
    assert (prefix / "share" / "rflysim_bridge" / "package.xml").exists()


@pytest.mark.slow
def test_installed_executable_reaches_rclpy(colcon_install, collector, processes):
    status = collector.subscribe(
        CameraStatus, "/colcon_test/camera/status", QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
    )
    # Run it the way a ROS user does: from the sourced install space.
    script = (
        f"source {WORKSPACE / 'install' / 'setup.bash'} && "
        f"exec {colcon_install / 'lib' / 'rflysim_bridge' / 'roundtrip_publisher'} "
        "--ros-args -r __ns:=/colcon_test -p rate_hz:=20"
    )
    processes.start(["bash", "-c", script], name="installed_roundtrip", env=colcon_env())
    msgs = collector.wait_for(status, 2, timeout=30)
    assert msgs[0].camera_params.att_type_valid_mask == 5
