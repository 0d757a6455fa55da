"""Config.json as RflySim users have it: every shipped config loads with the
rules of RflySim's own Python SDK (`VisionCaptureApi.jsonLoad`: strict
`json.loads`, then per-sensor keys, types and list lengths), and the bridge
reads both of the SDK's forms as well as files the SDK would refuse (comments,
missing fields), saying at start which fields it defaulted.
"""

import json
import re
import time
from pathlib import Path

import pytest
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import Image, PointCloud2

from rflysim_scenario import SUFFIX, Scenario

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = sorted((ROOT / "config").glob("*.json"))
INTEGER_FIELDS = ["SeqID", "TypeID", "TargetCopter", "TargetMountType", "DataWidth", "DataHeight", "DataCheckFreq"]
LIST_LENGTHS = {"SendProtocol": 8, "SensorPosXYZ": 3, "SensorAngEular": 3}


def is_int(v):
    return type(v) is int


def is_number(v):
    return type(v) in (int, float)


def sdk_problems(text):
    """What RflySim's SDK loader would refuse in a Config.json text: [] when it loads every sensor."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        return [f"not strict JSON: {e}"]
    sensors = data.get("VisionSensors") if isinstance(data, dict) else None
    if not isinstance(sensors, list) or not sensors:
        return ["no VisionSensors list"]
    problems = []
    for i, s in enumerate(sensors):
        where = f"VisionSensors[{i}]"
        if not isinstance(s, dict):
            problems.append(f"{where}: not an object")
            continue
        new_form = "EularOrQuat" in s
        lengths = dict(LIST_LENGTHS, otherParams=16 if new_form else 8)
        if new_form:
            lengths["SensorAngQuat"] = 4
        required = INTEGER_FIELDS + ["CameraFOV"] + list(lengths)
        problems += [f"{where}: {k} missing" for k in required if k not in s]
        problems += [f"{where}: {k} = {s[k]!r} is not an integer" for k in INTEGER_FIELDS if k in s and not is_int(s[k])]
        if "CameraFOV" in s and not is_number(s["CameraFOV"]):
            problems.append(f"{where}: CameraFOV = {s['CameraFOV']!r} is not a number")
        if new_form and not is_number(s["EularOrQuat"]):
            problems.append(f"{where}: EularOrQuat = {s['EularOrQuat']!r} is not a number")
        for k, n in lengths.items():
            v = s.get(k)
            if k in s and not (isinstance(v, list) and len(v) == n and all(map(is_number, v))):
                problems.append(f"{where}: {k} must be {n} numbers, is {v!r}")
        # The request is packed with uint16 for SendProtocol.
        if isinstance(s.get("SendProtocol"), list) and not all(is_int(v) and 0 <= v <= 65535 for v in s["SendProtocol"]):
            problems.append(f"{where}: SendProtocol must be uint16 integers")
    return problems


def complete(seq, type_id, port, width=32, height=24, new_form=False, **extra):
    s = {
        "SeqID": seq, "TypeID": type_id, "TargetCopter": 1, "TargetMountType": 0, "DataWidth": width,
        "DataHeight": height, "DataCheckFreq": 10, "SendProtocol": [2 if type_id < 20 else 1, 127, 0, 0, 1, port, 0, 0],
        "CameraFOV": 80, "SensorPosXYZ": [0.3, 0.0, 0.05], "SensorAngEular": [0.0, -0.3, 0.0],
        "otherParams": [60, 0, 0, 0, 0, 0, 0, 0],
    }
    if new_form:
        s.update(EularOrQuat=1, SensorAngQuat=[0.9950042, 0.0, -0.0998334, 0.0], otherParams=[60] + [0] * 15)
    s.update(extra)
    return s


def test_shipped_configs_are_found():
    assert ROOT / "config" / "Config.json" in SHIPPED


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_every_shipped_config_loads_with_the_sdk_rules(path):
    assert sdk_problems(path.read_text()) == []


def test_the_shipped_example_shows_both_of_the_sdk_forms():
    sensors = json.loads((ROOT / "config" / "Config.json").read_text())["VisionSensors"]
    forms = {("EularOrQuat" in s, len(s["otherParams"])) for s in sensors}
    assert forms == {(False, 8), (True, 16)}


def test_the_sdk_rules_refuse_what_the_sdk_refuses():
    def problems(*sensors, prefix=""):
        return sdk_problems(prefix + json.dumps({"VisionSensors": list(sensors)}))

    assert problems(complete(1, 1, 0)) == []
    assert problems(complete(1, 20, 0, new_form=True)) == []
    assert problems(complete(1, 1, 0), prefix="// a comment\n")[0].startswith("not strict JSON")
    assert problems(complete(1, 1, 0, DataWidth=320.0)) == ["VisionSensors[0]: DataWidth = 320.0 is not an integer"]
    assert problems(complete(1, 1, 0, SeqID=True)) == ["VisionSensors[0]: SeqID = True is not an integer"]
    no_mount = complete(1, 1, 0)
    del no_mount["TargetMountType"]
    assert problems(no_mount) == ["VisionSensors[0]: TargetMountType missing"]
    sixteen_without_flag = complete(1, 20, 0, otherParams=[0] * 16)
    assert problems(sixteen_without_flag) == [f"VisionSensors[0]: otherParams must be 8 numbers, is {[0] * 16!r}"]
    eight_with_flag = complete(1, 1, 0, EularOrQuat=0, SensorAngQuat=[1, 0, 0, 0])
    assert problems(eight_with_flag) == [f"VisionSensors[0]: otherParams must be 16 numbers, is {[60] + [0] * 7!r}"]
    flag_without_quat = complete(1, 20, 0, new_form=True)
    del flag_without_quat["SensorAngQuat"]
    assert problems(flag_without_quat) == ["VisionSensors[0]: SensorAngQuat missing"]
    assert problems(complete(1, 1, 0, SendProtocol=[2, 127, 0, 0, 1, 0.5, 0, 0])) == [
        "VisionSensors[0]: SendProtocol must be uint16 integers"]


def wait_for_line(sc, pattern, timeout=20.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = re.findall(pattern, sc.bridge_output())
        if found:
            return found
        time.sleep(0.1)
    raise AssertionError(f"no line matching {pattern!r} in the bridge's output:\n{sc.bridge_output()}")


def test_bridge_reads_both_forms_and_a_lenient_file_and_says_what_it_defaulted(collector, processes, tmp_path):
    old_form = complete(1, 1, 43501)
    new_form = complete(2, 20, 43502, width=90, height=8, new_form=True)
    lenient = {"SeqID": 3, "TypeID": 3, "DataWidth": 32, "DataHeight": 24, "DataCheckFreq": 10,
               "SendProtocol": [2, 127, 0, 0, 1, 43503, 0, 0]}
    sensors = [old_form, new_form, lenient]
    # Scenario writes the file with a comment first: only the bridge's lenient reader takes it.
    sc = Scenario(processes, tmp_path, sensors, sim_args=["--window-id", "17"], bridge_params={"window_id": 17, "imu": False})
    assert sdk_problems(sc.config.read_text())[0].startswith("not strict JSON")
    assert sdk_problems(sc.config.read_text().split("\n", 1)[1]) == [
        f"VisionSensors[2]: {k} missing"
        for k in ["TargetCopter", "TargetMountType", "CameraFOV", "SendProtocol", "SensorPosXYZ", "SensorAngEular",
                  "otherParams"] if k not in lenient]

    qos = QoSProfile(depth=20, reliability=ReliabilityPolicy.RELIABLE)
    keys = {s["SeqID"]: collector.subscribe(PointCloud2 if s["TypeID"] == 20 else Image,
                                            f"/rflysim/sensor{s['SeqID']}/{SUFFIX[s['TypeID']]}", qos)
            for s in sensors}
    for seq, key in keys.items():
        msg = collector.wait_for(key, 2, timeout=30)[-1]
        if seq == 2:
            assert msg.width > 0, "the 16-parameter LiDAR publishes points"
        else:
            assert (msg.width, msg.height) == (32, 24), f"sensor {seq}"
            assert bytes(msg.data) == sc.rendered_at(seq, msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9)

    lines = wait_for_line(sc, r"sensor \d+: defaulted [^\n]*")
    assert lines == ["sensor 3: defaulted TargetCopter=1, TargetMountType=0, CameraFOV=90, SensorPosXYZ=[0;3], "
                     "SensorAngEular=[0;3], otherParams=[0;16] (RflySim's Python SDK needs these fields in Config.json)"]
