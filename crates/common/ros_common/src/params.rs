//! ROS 2 parameters (`--ros-args -p name:=value`, launch files, YAML) with
//! defaults. One policy for every parameter: a value of the wrong type, out
//! of its range or not one of its choices is an error that names the
//! parameter, at start; nothing is clamped or replaced by the default.
//!
//! A parameter is declared once, as a constant holding its name, default,
//! range and a one-line description ([`IntParam`], [`FloatParam`],
//! [`BoolParam`], [`StringParam`], [`ChoiceParam`], [`IntListParam`],
//! [`StringListParam`]), so that the code that reads it, a `Default`, the
//! example YAML and the documentation's tables all say the same. Names carry
//! their unit (`_s`, `_ms`, `_hz`, `_deg`, `_m`, `_bytes`).
//!
//! Every parameter read is noted: with `RFLYSIM_BRIDGE_WRITE_PARAMETERS=<file>`
//! in its environment an executable writes them, at their defaults, as a
//! ROS 2 parameters file once it has read them, and with
//! `RFLYSIM_BRIDGE_WRITE_PARAMETER_TABLE=<file>` as a Markdown table, then
//! exits (what `config/<bridge>.yaml` and `docs/parameters.md` are checked
//! against).
//!
//! A renamed parameter keeps working under its former name ([`Renamed`],
//! [`apply_renamed`]): its value is read under the new name, with a warning.
//!
//! r2r's `RosParams` derive (0.9.7) is not used: it has no array parameters
//! (`vehicle_ids`, `allowed_senders`), no ranges (its `Parameter` has a TODO
//! for min and max), refuses `-p x:=1` for a float, names nested fields with
//! dots (which would rename parameters users set today), and keeps the struct
//! writable at run time through `ros2 param set` although the bridges read
//! their settings once, at start.

// The kinds read and check, the table records, the renamed table maps old to
// new; `shared` below is the one list the bridges read alike.
mod kinds;
mod renamed;
mod table;

pub use kinds::*;
pub use renamed::*;
pub use table::*;

/// The parameters every bridge that has them reads alike: one name, one
/// meaning, one default, one range.
pub mod shared {
    use super::{BoolParam, FloatParam, IntParam, Renamed, StringParam};

    pub const QOS_DEPTH: IntParam = IntParam::new(
        "qos_depth",
        crate::qos::DEFAULT_SENSOR_DEPTH as i64,
        1..=1000,
        "history depth of the publishers (reliable, volatile: reliable and best-effort subscribers receive)",
    );
    pub const DIAGNOSTICS_PERIOD: FloatParam = FloatParam::new(
        "diagnostics_period_s",
        1.0,
        0.05..=60.0,
        "seconds between `/diagnostics` messages (per stream: rate, drops by reason, latency, age of the last message; per process: memory)",
    );
    pub const PUBLISH_TF: BoolParam = BoolParam::new("publish_tf", true, "publish `/tf` and `/tf_static`");
    pub const USE_SIM_TIME: BoolParam = BoolParam::new(
        "use_sim_time",
        false,
        "stamps are the simulator's time, which the bridge publishes on `/clock` ([stamps](commands-and-time.md))",
    );
    pub const CMD_TIMEOUT: FloatParam = FloatParam::new(
        "cmd_timeout_s",
        0.5,
        0.01..=60.0,
        "seconds of silence after which the neutral command is sent, and the age beyond which a command is dropped ([the command rule](commands-and-time.md))",
    );
    pub const DECODE_IMAGES_ALWAYS: BoolParam = BoolParam::new(
        "decode_images_always",
        false,
        "decode compressed images (JPEG, PNG) even while nobody subscribes to the raw topic",
    );

    /// The former names of the shared parameters.
    pub const RENAMED: &[Renamed] = &[
        Renamed::new("decode_jpeg_always", "decode_images_always"),
        Renamed::new("cmd_timeout", "cmd_timeout_s"),
        Renamed::new("diagnostics_period", "diagnostics_period_s"),
    ];

    /// `frame_prefix`, `<simulator>/` by default: frame ids are
    /// `<simulator>/<vehicle>/<frame>` (docs/names.md).
    pub const fn frame_prefix(simulator: &'static str) -> StringParam {
        StringParam::new(
            "frame_prefix",
            simulator,
            "put in front of every frame id: the `<simulator>/` of `<simulator>/<vehicle>/<frame>` ([names](names.md)); empty: none",
        )
    }
    pub const WORLD_FRAME_ID: StringParam = StringParam::new(
        "world_frame_id",
        frames::ids::MAP,
        "the ENU world frame of poses, odometry and `/tf`, after `frame_prefix` ([names](names.md))",
    );

    /// A `cmd_vel` gain.
    pub const fn gain(name: &'static str, default: f64, description: &'static str) -> FloatParam {
        FloatParam::new(name, default, -1e6..=1e6, description)
    }
}
