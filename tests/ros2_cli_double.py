"""A stand-in for the `ros2` command line (ros2cli is not installable from
PyPI; a test double, named as such): it does what `ros2 service call`,
`ros2 topic hz` and `ros2 topic echo` do, through rclpy, so that the README's
lines of those commands run in the tests as written."""

import importlib
import shlex
import time

import yaml
from conftest import answer
from rclpy.qos import qos_profile_sensor_data

PRIMITIVES = {
    "float": float, "double": float, "boolean": bool, "string": str, "octet": int, "char": int,
    **{t: int for t in ("int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64")},
}


def import_type(name, kind):
    """`pkg/srv/Name` or `pkg/Name` (kind `msg` or `srv`) → the Python class."""
    parts = name.split("/")
    pkg, cls = parts[0], parts[-1]
    return getattr(importlib.import_module(f"{pkg}.{kind}"), cls)


def fill(msg, values):
    """Sets `msg`'s fields from a YAML mapping as `ros2 service call` does; an unknown field is an error."""
    types = msg.get_fields_and_field_types()
    for key, value in (values or {}).items():
        assert key in types, f"{type(msg).__name__} has no field {key!r}"
        kind = types[key]
        if isinstance(value, dict):
            fill(getattr(msg, key), value)
        elif kind in PRIMITIVES:
            setattr(msg, key, PRIMITIVES[kind](value))
        elif kind.startswith(("sequence<", "bounded_sequence<")) or "[" in kind:
            inner = kind.split("<", 1)[1].rstrip(">").split(",")[0] if "<" in kind else kind.split("[")[0]
            if inner in PRIMITIVES:
                setattr(msg, key, [PRIMITIVES[inner](v) for v in value])
            else:
                item_type = import_type(inner, "msg")
                items = []
                for v in value:
                    items.append(item_type())
                    fill(items[-1], v)
                setattr(msg, key, items)
        else:
            raise AssertionError(f"{key}: cannot set a {kind} from {value!r}")
    return msg


def parse(line):
    """A README line → (verb, arguments): ("service call", name, type, yaml), ("topic hz", topic), …"""
    words = shlex.split(line)
    assert words[0] == "ros2", line
    verb = " ".join(words[1:3])
    if verb == "service call":
        return verb, words[3], words[4], (words[5] if len(words) > 5 else "{}")
    if verb in ("topic hz", "topic echo"):
        return verb, words[3]
    raise AssertionError(f"the ros2 stand-in does not do `{verb}`: {line}")


def service_call(node, name, type_name, request_yaml, timeout=15.0):
    srv = import_type(type_name, "srv")
    request = fill(srv.Request(), yaml.safe_load(request_yaml))
    client = node.create_client(srv, name)
    try:
        return answer(client, name, request, timeout)
    finally:
        node.destroy_client(client)


def topic_type(node, topic, timeout=15.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for name, types in node.get_topic_names_and_types():
            if name == topic and types:
                return import_type(types[0], "msg")
        time.sleep(0.1)
    raise AssertionError(f"{topic}: not on the graph within {timeout} s")


def topic_hz(collector, topic, seconds=6.0, settle=2.0):
    """Messages a second on `topic`, subscribed as `ros2 topic hz` does (sensor-data QoS: best effort)."""
    key = collector.subscribe(topic_type(collector.node, topic), topic, qos_profile_sensor_data,
                              key=f"hz {topic}")
    time.sleep(settle)
    first = len(collector.messages(key))
    time.sleep(seconds)
    return (len(collector.messages(key)) - first) / seconds
