//! What the emulators' command lines share, on clap: value parsers that say
//! why a value is refused, and `--ros-args` (everything from it on is left
//! out, so that ROS launch files can start an emulator).

use std::ffi::OsString;
use std::time::Duration;

/// The arguments up to `--ros-args`, program name first.
pub fn args_before_ros_args(args: impl IntoIterator<Item = OsString>) -> Vec<OsString> {
    args.into_iter().take_while(|a| a != "--ros-args").collect()
}

fn number(v: &str) -> Result<f64, String> {
    v.trim().parse().map_err(|_| format!("cannot read {v:?} as a number"))
}

/// A probability, 0..=1.
pub fn probability(v: &str) -> Result<f64, String> {
    let p = number(v)?;
    if (0.0..=1.0).contains(&p) {
        Ok(p)
    } else {
        Err(format!("{p} is not a probability (0..1)"))
    }
}

/// A duration in seconds, 0 or more.
pub fn seconds(v: &str) -> Result<Duration, String> {
    let s = number(v)?;
    Duration::try_from_secs_f64(s).map_err(|_| format!("{s} is not a duration in seconds"))
}

/// A rate in Hz, in (0, 10000].
pub fn rate_hz(v: &str) -> Result<f64, String> {
    let hz = number(v)?;
    if hz > 0.0 && hz <= 10_000.0 {
        Ok(hz)
    } else {
        Err(format!("{hz} Hz is outside (0, 10000]"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_checked_and_ros_args_left_out() {
        assert_eq!(probability("0.25"), Ok(0.25));
        assert!(probability("1.5").is_err() && probability("x").is_err() && probability("NaN").is_err());
        assert_eq!(seconds("1.5"), Ok(Duration::from_millis(1500)));
        assert!(seconds("-1").is_err());
        assert!(rate_hz("0").is_err() && rate_hz("20000").is_err());
        let args = ["sim", "--rate", "5", "--ros-args", "-r", "__node:=x"].map(OsString::from);
        assert_eq!(args_before_ros_args(args), ["sim", "--rate", "5"].map(OsString::from));
    }
}
