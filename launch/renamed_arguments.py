"""Former names of the launch files' arguments, still accepted: a value given
under a former name is taken under the new one, with a warning; where both
are given, the new one wins and the warning says so (the bridges treat their
parameters' former names the same way). Not a launch file: the launch files
import it."""

from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.logging import get_logger


def _named(new):
    """`new` as the warning says it: one name, or a (host, port) pair."""
    return f"`{new}`" if isinstance(new, str) else " and ".join(f"`{n}`" for n in new)


def taken(old_value, new):
    """The values a former argument's value gives its new name(s): one, or
    `host:port` split into (host, port) where `new` is such a pair."""
    if isinstance(new, str):
        return {new: old_value}
    host_name, port_name = new
    servers = [s.strip() for s in old_value.split(",") if s.strip()]
    hosts, ports = zip(*(s.rsplit(":", 1) for s in servers)) if all(":" in s for s in servers) else ((), ())
    if not servers or len(set(ports)) != 1:
        raise ValueError(f"launch argument value {old_value!r} is not host:port[,host:port…] with one port")
    return {host_name: ",".join(hosts), port_name: ports[0]}


def take_former_names(renamed):
    """An action that must come before the new arguments' declarations: those
    set a default only where no value was given, and this gives the value
    given under a former name (old → new in `renamed`) to its new name."""

    def take(context):
        logger = get_logger("launch")
        given = context.launch_configurations
        for old, new in renamed.items():
            if not given.get(old):
                continue
            said = f"launch argument `{old}` is now {_named(new)}"
            first = new if isinstance(new, str) else new[0]
            if first in given:
                logger.warning(f"{said}; both are given: {_named(new)} wins, `{old}` is ignored")
            else:
                given.update(taken(given[old], new))
                logger.warning(f"{said}; the old name still works")
        return []

    return OpaqueFunction(function=take)


def former_declarations(renamed):
    """The former names, declared so that `--show-args` lists them."""
    return [DeclareLaunchArgument(old, default_value="", description=f"former name of {_named(new)}")
            for old, new in renamed.items()]
