"""A recording test double of the ROS 2 launch API (`launch`, `launch_ros`),
which can't be installed here: it records what a launch file builds and
resolves substitutions and conditions against given launch arguments, so the
file's logic can be checked without the `ros2 launch` runtime."""

import importlib.util
import sys
import types
from pathlib import Path


class Recorded:
    def __init__(self, *args, **kwargs):
        self.args, self.kwargs = args, kwargs


class LaunchConfiguration:
    def __init__(self, name):
        self.name = name

    def resolve(self, ctx):
        return resolve(ctx.values[self.name], ctx)

    def perform(self, ctx):
        return self.resolve(ctx)


class PathJoinSubstitution:
    def __init__(self, parts):
        self.parts = parts

    def resolve(self, ctx):
        return "/".join(resolve(p, ctx) for p in self.parts)


class PythonExpression:
    """Joins its parts and evaluates them as Python, as launch does."""

    def __init__(self, parts):
        self.parts = parts

    def resolve(self, ctx):
        return str(eval("".join(resolve(p, ctx) for p in self.parts)))


class FindPackageShare:
    def __init__(self, package):
        self.package = package

    def resolve(self, ctx):
        return f"{ctx.share_root}/{self.package}"


class IfCondition:
    def __init__(self, expression):
        self.expression = expression

    def holds(self, ctx):
        return resolve(self.expression, ctx).lower() in ("true", "1", "yes")


class DeclareLaunchArgument(Recorded):
    pass


class Node(Recorded):
    pass


class ExecuteProcess(Recorded):
    pass


class OpaqueFunction(Recorded):
    """Its function runs at evaluation, as launch runs it, and returns more actions."""


class LaunchDescription(Recorded):
    pass


class Logger:
    """launch.logging's logger: what it is told goes to `logged`."""

    def __init__(self, name):
        self.name = name

    def warning(self, message):
        logged.append(("warning", message))

    def info(self, message):
        logged.append(("info", message))


# What the launch file logged during the last `evaluate`, as (level, message).
logged = []


def get_logger(name=None):
    return Logger(name)


def resolve(value, ctx):
    if hasattr(value, "resolve"):
        return value.resolve(ctx)
    if isinstance(value, list):
        return [resolve(v, ctx) for v in value]
    if isinstance(value, dict):
        return {k: resolve(v, ctx) for k, v in value.items()}
    return value


class Context:
    def __init__(self, values, share_root):
        self.values, self.share_root = values, share_root

    @property
    def launch_configurations(self):
        return self.values


def load(path: Path):
    """Imports a launch file against this double instead of the real API."""
    modules = {
        "launch": {"LaunchDescription": LaunchDescription},
        "launch.actions": {"DeclareLaunchArgument": DeclareLaunchArgument, "ExecuteProcess": ExecuteProcess,
                           "OpaqueFunction": OpaqueFunction},
        "launch.conditions": {"IfCondition": IfCondition},
        "launch.logging": {"get_logger": get_logger},
        "launch.substitutions": {"LaunchConfiguration": LaunchConfiguration, "PathJoinSubstitution": PathJoinSubstitution,
                                 "PythonExpression": PythonExpression},
        "launch_ros.actions": {"Node": Node},
        "launch_ros.substitutions": {"FindPackageShare": FindPackageShare},
    }
    saved = {name: sys.modules.get(name) for name in list(modules) + ["launch_ros"]}
    try:
        for name, attrs in modules.items():
            m = types.ModuleType(name)
            m.__dict__.update(attrs)
            sys.modules[name] = m
        sys.modules["launch_ros"] = types.ModuleType("launch_ros")
        spec = importlib.util.spec_from_file_location("launch_under_test", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        for name, m in saved.items():
            if m is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = m


def evaluate(path: Path, overrides=None, share_root="/opt/share"):
    """What `ros2 launch` would start: [{executable, package, namespace, parameters, arguments}]; a plain
    process (ExecuteProcess) has no package. As launch does, the actions run in order: a declaration sets
    its default only where the argument was not given."""
    ld = load(path).generate_launch_description()
    actions = ld.args[0]
    logged.clear()
    ctx = Context(dict(overrides or {}), share_root)
    started = []
    pending = list(actions)
    while pending:
        a = pending.pop(0)
        if isinstance(a, DeclareLaunchArgument):
            ctx.values.setdefault(a.args[0], a.kwargs["default_value"])
            continue
        if isinstance(a, OpaqueFunction):
            pending[:0] = a.kwargs["function"](ctx)
            continue
        cond = a.kwargs.get("condition")
        if cond is not None and not cond.holds(ctx):
            continue
        if isinstance(a, Node):
            started.append({
                "executable": a.kwargs["executable"],
                "package": a.kwargs["package"],
                "namespace": resolve(a.kwargs.get("namespace", ""), ctx),
                "parameters": resolve(a.kwargs.get("parameters", []), ctx),
                "arguments": resolve(a.kwargs.get("arguments", []), ctx),
            })
        elif isinstance(a, ExecuteProcess):
            cmd = resolve(a.kwargs["cmd"], ctx)
            started.append({"executable": cmd[0], "package": None, "namespace": "", "parameters": [],
                            "arguments": cmd[1:]})
    return started
