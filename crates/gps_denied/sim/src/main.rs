//! `gps_denied_sim`: the GPS-denied landing drone emulator. See `--help`.

use std::io::Write;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use gps_denied_proto::wire::{
    DEFAULT_LOCAL_PORT, DEFAULT_SIM_PORT, DEFAULT_TELEMETRY_RATE_HZ, IMAGE_EVERY_NTH_FRAME, JPEG_QUALITY,
};
use gps_denied_sim::emulator::{run, Options};
use gps_denied_sim::world::Pattern;

/// `--help`, with the wire's ports and defaults from `gps_denied_proto`.
fn help() -> String {
    format!(
        "\
gps_denied_sim: an emulator of the GPS-denied landing drone simulator
JSON telemetry over UDP from a drone hovering above a rover that
carries the landing pad, driven by the JSON commands it receives.

Usage: gps_denied_sim [options]

Wire
  --bind ADDR:PORT      where commands arrive and telemetry leaves from
                        (default 0.0.0.0:{DEFAULT_SIM_PORT}, the simulator's port)
  --target ADDR:PORT    where telemetry goes (default 127.0.0.1:{DEFAULT_LOCAL_PORT}, the bridge)
  --rover-telemetry     also send the rover's telemetry object after each frame
World
  --pattern circular|linear|figure8   the rover's path (default circular)
Rates
  --rate HZ             telemetry rate (default {DEFAULT_TELEMETRY_RATE_HZ}); the simulation advances
                        1/HZ seconds per frame
  --flat-out            send frames as fast as possible (sim time runs ahead)
  --image-every N       the camera image in every N-th frame (default {IMAGE_EVERY_NTH_FRAME})
  --jpeg-quality Q      (default {JPEG_QUALITY})
  --reuse-image         render one image and resend it (benchmarks)
  --duration S          stop after S seconds
  --frames N            stop after N telemetry frames
  --stats S             print rates every S seconds (default 1; 0: never)
  --quiet               same as --stats 0
  --send-log FILE       append \"timestamp wall_time\" for each frame sent (benchmarks)
Faults (probabilities per telemetry frame, 0..1)
  --junk P              a datagram of random bytes before the frame
  --truncate P          the frame's JSON cut short
  --wrong-types P       one part replaced by a value of the wrong type
  --missing-fields P    one part left out
  --bad-base64 P        the image's base64 broken (image frames)
  --corrupt-jpeg P      the image not a JPEG, or cut in half (image frames)
  --restart-every S     restart every S simulation seconds: time back to 0, state reset
  --seed N              seed for reproducible faults

Dynamics: thrust is a vertical acceleration of 4 m/s² per unit relative to
hover (0 hovers); pitch and roll are tilt set-points in radians (positive
pitch flies forward, positive roll flies right), yaw is a yaw rate in rad/s.
The last command holds until the next. Axes: world z up, body x forward,
y left, z up. The camera looks straight down; the image's top is forward.

SIGINT / SIGTERM stop it within a second. Anything after --ros-args is
ignored, so that ROS launch files can start it.
"
    )
}

static STOP: AtomicBool = AtomicBool::new(false);

fn parse_args(args: Vec<String>) -> Result<Option<Options>, String> {
    let mut o = Options::default();
    let mut it = args.into_iter();
    fn num<T: std::str::FromStr>(v: Option<String>, flag: &str) -> Result<T, String> {
        let v = v.ok_or_else(|| format!("{flag} needs a value"))?;
        v.parse().map_err(|_| format!("{flag}: cannot read {v:?}"))
    }
    fn probability(v: Option<String>, flag: &str) -> Result<f64, String> {
        let p: f64 = num(v, flag)?;
        if (0.0..=1.0).contains(&p) {
            Ok(p)
        } else {
            Err(format!("{flag}: {p} is not a probability"))
        }
    }
    while let Some(a) = it.next() {
        let flag = a.as_str();
        match flag {
            "-h" | "--help" => return Ok(None),
            "--ros-args" => break,
            "--bind" => o.bind = num::<SocketAddr>(it.next(), flag)?,
            "--target" => o.target = num::<SocketAddr>(it.next(), flag)?,
            "--rover-telemetry" => o.rover_telemetry = true,
            "--pattern" => {
                let v: String = num(it.next(), flag)?;
                o.pattern =
                    Pattern::parse(&v).ok_or_else(|| format!("--pattern: {v:?} is not circular, linear or figure8"))?;
            }
            "--rate" => o.rate_hz = num(it.next(), flag)?,
            "--flat-out" => o.flat_out = true,
            "--image-every" => o.image_every = num(it.next(), flag)?,
            "--jpeg-quality" => o.jpeg_quality = num(it.next(), flag)?,
            "--reuse-image" => o.reuse_image = true,
            "--duration" => o.duration = Some(num(it.next(), flag)?),
            "--frames" => o.frames = Some(num(it.next(), flag)?),
            "--stats" => {
                let s: f64 = num(it.next(), flag)?;
                o.stats_interval = (s > 0.0).then(|| Duration::from_secs_f64(s));
            }
            "--quiet" => o.stats_interval = None,
            "--send-log" => o.send_log = Some(num::<String>(it.next(), flag)?.into()),
            "--junk" => o.faults.junk = probability(it.next(), flag)?,
            "--truncate" => o.faults.truncate = probability(it.next(), flag)?,
            "--wrong-types" => o.faults.wrong_types = probability(it.next(), flag)?,
            "--missing-fields" => o.faults.missing_fields = probability(it.next(), flag)?,
            "--bad-base64" => o.faults.bad_base64 = probability(it.next(), flag)?,
            "--corrupt-jpeg" => o.faults.corrupt_jpeg = probability(it.next(), flag)?,
            "--restart-every" => o.restart_every = Some(num(it.next(), flag)?),
            "--seed" => o.faults.seed = num(it.next(), flag)?,
            other => return Err(format!("unknown option {other:?} (see --help)")),
        }
    }
    if !(o.rate_hz.is_finite() && o.rate_hz > 0.0) {
        return Err(format!("--rate: {} is not a positive rate", o.rate_hz));
    }
    if !(1..=100).contains(&o.jpeg_quality) {
        return Err(format!("--jpeg-quality: {} is not in 1..=100", o.jpeg_quality));
    }
    Ok(Some(o))
}

fn main() -> ExitCode {
    // Nothing here may panic on a closed stdout or stderr: every write's
    // error is ignored (Rust ignores SIGPIPE, so a gone reader is EPIPE).
    let options = match parse_args(std::env::args().skip(1).collect()) {
        Ok(Some(o)) => o,
        Ok(None) => {
            let _ = std::io::stdout().write_all(help().as_bytes());
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "gps_denied_sim: {e}");
            return ExitCode::from(2);
        }
    };
    // Every blocking receive of the run has a timeout, so it sees STOP.
    let outcome = process_support::stop_signal::run_until_signal(
        move || run(&options, &STOP, &mut std::io::stdout()),
        |_| STOP.store(true, Ordering::SeqCst),
    );
    let mut stdout = std::io::stdout();
    match outcome {
        Ok(counts) => {
            let _ = writeln!(
                stdout,
                "gps_denied_sim: sent {} frames ({} images, {} rover), {} commands ({} bad), {} send errors; faults: {}",
                counts.frames,
                counts.images,
                counts.rover_frames,
                counts.commands,
                counts.bad_commands,
                counts.send_errors,
                counts.faults
            );
            let _ = stdout.flush();
            ExitCode::SUCCESS
        }
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "gps_denied_sim: {e}");
            ExitCode::FAILURE
        }
    }
}
