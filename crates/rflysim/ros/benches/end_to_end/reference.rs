//! The references a bridge row is measured against: DDS alone (pre-built
//! messages published by an r2r program) and the receiving reference (the
//! same, after taking each frame's datagrams from the emulator, or copying
//! it out of the emulator's shared-memory region).

use super::*;

/// A reference publisher (this executable, `--reference-publisher`) and the
/// topic it publishes on.
pub fn start_reference(kind: Kind, size: &str, rate: Option<f64>, source: Source) -> (StoppedOnDrop, String) {
    let k = match (kind, size) {
        (Kind::Image, "4K") => "image4k",
        (Kind::Image, _) => "image",
        (Kind::Imu, _) => "imu",
        (Kind::Cloud, _) => "cloud",
    };
    let mut args = vec![
        "--reference-publisher".to_string(),
        k.into(),
        rate.map_or("0".into(), |r| r.to_string()),
    ];
    match source {
        Source::Prebuilt => {}
        Source::Udp(port) => args.extend(["--receive-port".into(), port.to_string()]),
        Source::Shm(name) => args.extend(["--receive-shm".into(), name.into()]),
        Source::CopterSimImu { copter, hz } => {
            args.extend(["--receive-imu".into(), copter.to_string(), hz.to_string()]);
        }
    }
    let publisher = StoppedOnDrop(
        Command::new(std::env::current_exe().unwrap())
            .args(args)
            .envs(publisher_env())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    (publisher, format!("/rflysim_bench/reference_{k}"))
}

/// What a reference publisher waits for before each message.
#[derive(Debug, Clone, Copy)]
pub enum Source {
    /// Nothing: it publishes at its rate.
    Prebuilt,
    /// The emulator's next frame on this UDP port.
    Udp(u16),
    /// The emulator's next frame in this shared-memory region, copied out.
    Shm(&'static str),
    /// The next IMU sample of this CopterSim, asked for at `hz` as the bridge asks.
    CopterSimImu { copter: u16, hz: u16 },
}

/// The reference: a separate r2r process publishing pre-built messages.
pub fn reference_case(node: &mut r2r::Node, name: &str, kind: Kind, rate: Option<f64>) -> Result {
    let (publisher, topic) = start_reference(kind, size_of(name), rate, Source::Prebuilt);
    let measured = Window::measure(node, &topic, kind, publisher.0.id());
    let mut row = measured.result(name, kind, rate.unwrap_or(f64::NAN), measured.latencies_from_stamps());
    row.nominal_hz = rate.unwrap_or(f64::NAN);
    row
}

/// The receiving reference: the reference publisher, but each message is
/// published when the emulator's next frame has been received (into one
/// buffer, as a bridge must) on `port`, where the emulator sends sensor
/// `seq_id`'s stream as in [`bridge_case`].
pub fn receiving_reference_case(
    node: &mut r2r::Node,
    name: &str,
    config: &str,
    stream: (u16, u16),
    kind: Kind,
) -> Result {
    receiving_reference_case_at(Place::Here, node, name, config, stream, kind)
}

/// `receiving_reference_case` with the emulator at `place`.
pub fn receiving_reference_case_at(
    place: Place,
    node: &mut r2r::Node,
    name: &str,
    config: &str,
    (port, seq_id): (u16, u16),
    kind: Kind,
) -> Result {
    let (cfg, log) = case_files(name, config);
    let (publisher, topic) = start_reference(kind, size_of(name), None, Source::Udp(port));
    let place_args = place.sim_args();
    let mut args = vec!["--copters", ""];
    args.extend(place_args.iter().map(String::as_str));
    let _sim = start_emulator_via(&place.prefix(), &cfg, &log, &args);
    let measured = Window::measure(node, &topic, kind, publisher.0.id());
    let sent = SendLog::read(&log);
    let stream = seq_id.to_string();
    // Stamped just before publishing, after the frame's last datagram came in:
    // latency from then, not from the emulator's send as for the bridge.
    measured.result(
        name,
        kind,
        measured.offered(&sent, &stream),
        measured.latencies_from_stamps(),
    )
}

/// The receiving reference of CopterSim `copter`'s IMU: DDS alone
/// publishing each time a sample, asked for at `hz`, has come in.
pub fn imu_receiving_reference_case(node: &mut r2r::Node, name: &str, copter: u16, hz: u16) -> Result {
    let (cfg, log) = case_files(name, r#"{"VisionSensors": []}"#);
    let (publisher, topic) = start_reference(Kind::Imu, "", None, Source::CopterSimImu { copter, hz });
    let copters = copter.to_string();
    let _sim = start_emulator(&cfg, &log, &["--copters", &copters]);
    let measured = Window::measure(node, &topic, Kind::Imu, publisher.0.id());
    let sent = SendLog::read(&log);
    let offered = measured.offered(&sent, &format!("imu{copter}"));
    // Stamped just before publishing, as the receiving reference of frames.
    measured.result(name, Kind::Imu, offered, measured.latencies_from_stamps())
}

/// CopterSim's IMU as any bridge must take it: asked for (again every
/// second until a sample comes), then one datagram a sample out of the kernel.
struct ImuSamples {
    sock: std::net::UdpSocket,
    request: Vec<u8>,
    request_to: std::net::SocketAddr,
    flowing: bool,
    next_request: Instant,
    buf: [u8; 1024],
}

impl ImuSamples {
    fn open(copter: u16, hz: u16) -> Self {
        use rflysim_proto::request::{imu_data_port, imu_request_port, ImuRequest};
        let (sock, _) =
            ros_common::net::udp_receiver(std::net::Ipv4Addr::UNSPECIFIED, imu_data_port(copter), 1 << 20).unwrap();
        sock.set_nonblocking(false).unwrap();
        // Short enough to ask again, and to see the stop once the emulator has gone.
        sock.set_read_timeout(Some(Duration::from_millis(100))).unwrap();
        Self {
            sock,
            request: ImuRequest::for_copter(copter, std::net::Ipv4Addr::LOCALHOST, hz).encode(),
            request_to: (std::net::Ipv4Addr::LOCALHOST, imu_request_port(copter)).into(),
            flowing: false,
            next_request: Instant::now(),
            buf: [0; 1024],
        }
    }

    /// Whether a sample came in before the read timed out.
    fn next(&mut self) -> bool {
        if !self.flowing && Instant::now() >= self.next_request {
            let _ = self.sock.send_to(&self.request, self.request_to);
            self.next_request = Instant::now() + Duration::from_secs(1);
        }
        let came = self.sock.recv(&mut self.buf).is_ok();
        self.flowing |= came;
        came
    }
}

/// The receiving reference from shared memory: DDS alone after the copy of
/// each new frame out of the emulator's region (`shm_name`) that any reader
/// makes, with the emulator writing on the same cores. Stamped with the
/// frame's time stamp, as the bridge does, so that latency runs from the
/// emulator's write as for the bridge.
pub fn shm_receiving_reference_case(
    node: &mut r2r::Node,
    name: &str,
    config: &str,
    (shm_name, seq_id): (&'static str, u16),
    kind: Kind,
) -> Result {
    let (cfg, log) = case_files(name, config);
    let _sim = start_emulator(&cfg, &log, &["--copters", ""]);
    let (publisher, topic) = start_reference(kind, size_of(name), None, Source::Shm(shm_name));
    let measured = Window::measure(node, &topic, kind, publisher.0.id());
    measured.result_from_sends(name, kind, &log, seq_id)
}

/// Waits for each new frame in the region `name` and copies it out, as a
/// bridge must before it publishes; `None` at the stop.
struct ShmFrames {
    _mapping: shared_memory::Shmem,
    region: rflysim_proto::shm::RawRegion,
    reader: rflysim_proto::shm::ShmReader,
    payload_len: usize,
    buf: Vec<u8>,
    start: Instant,
}

impl ShmFrames {
    fn open(name: &str, payload_len: usize, stop: &std::sync::atomic::AtomicBool) -> Option<Self> {
        loop {
            if stop.load(std::sync::atomic::Ordering::Relaxed) {
                return None;
            }
            if let Ok(mapping) = shared_memory::ShmemConf::new().os_id(name).open() {
                // SAFETY: `_mapping` keeps the mapping alive as long as `region`;
                // the emulator neither shrinks nor replaces it during a case.
                let region = unsafe { rflysim_proto::shm::RawRegion::new(mapping.as_ptr(), mapping.len()) };
                return Some(Self {
                    _mapping: mapping,
                    region,
                    reader: rflysim_proto::shm::ShmReader::new(),
                    payload_len,
                    buf: Vec::new(),
                    start: Instant::now(),
                });
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The next frame's time stamp, polling every millisecond as the bridge does.
    fn next(&mut self, stop: &std::sync::atomic::AtomicBool) -> Option<f64> {
        while !stop.load(std::sync::atomic::Ordering::Relaxed) {
            let now = self.start.elapsed();
            if let Some(t) = self.reader.poll(&mut self.region, self.payload_len, &mut self.buf, now) {
                return Some(t);
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        None
    }
}

/// What any bridge must do before it can publish a UDP frame: take the
/// frame's datagrams out of the kernel, each into its place in one buffer,
/// until the frame's last. A datagram is received over the end of what is
/// already there, so its header covers the 32 bytes before its place; those
/// are put back. False if the socket's read timed out first.
pub fn receive_frame(sock: &std::net::UdpSocket, frame: &mut [u8]) -> bool {
    // The longer of RflySim's two headers.
    const ROOM: usize = HeaderKind::Frame32.header_len();
    let mut end = ROOM;
    loop {
        let at = end - ROOM;
        let mut covered = [0u8; ROOM];
        covered.copy_from_slice(&frame[at..end]);
        let Ok(n) = sock.recv(&mut frame[at..]) else {
            return false;
        };
        let Ok(header) = DatagramHeader::parse(&frame[at..at + n]) else {
            frame[at..end].copy_from_slice(&covered);
            continue;
        };
        let header_len = header.kind.header_len();
        if header_len != ROOM {
            frame.copy_within(at + header_len..at + n, end);
        }
        frame[at..end].copy_from_slice(&covered);
        end += n - header_len;
        if header.pkg_id + 1 >= header.pkg_num || end + (1 << 16) > frame.len() {
            return true;
        }
    }
}

pub fn image_1080p() -> Image {
    image(1920, 1080)
}

pub fn image(width: u32, height: u32) -> Image {
    Image {
        height,
        width,
        encoding: "bgr8".into(),
        step: width * 3,
        data: vec![0x7F; (width * height * 3) as usize],
        ..Default::default()
    }
}

pub fn cloud_100k() -> PointCloud2 {
    let f = |n: &str, o| PointField {
        name: n.into(),
        offset: o,
        datatype: PointField::FLOAT32 as u8,
        count: 1,
    };
    PointCloud2 {
        height: 1,
        width: 100_000,
        fields: vec![f("x", 0), f("y", 4), f("z", 8), f("seg", 12)],
        point_step: 16,
        row_step: 1_600_000,
        data: vec![0x3F; 1_600_000],
        is_dense: true,
        ..Default::default()
    }
}

/// An IMU message as the bridge builds it from a CopterSim sample (vehicle
/// 1, at rest, orientation known), so that DDS alone sends the same bytes.
pub fn imu_of_copter_1() -> Imu {
    let sample = rflysim_proto::telemetry::ImuSample {
        seq: 0,
        time_stamp: 0.0,
        acc: [0.0, 0.0, -9.81],
        gyro: [0.01, -0.02, 0.03],
    };
    let header = ros_common::msgs::header(Default::default(), &rflysim_ros::names::base_frame(1));
    let level = Some([1.0, 0.0, 0.0, 0.0]);
    rflysim_ros::msgs::imu(&sample, level, header, &Default::default())
}

pub fn reference_publisher(
    kind: &str,
    rate: f64,
    receive_port: Option<u16>,
    receive_shm: Option<&str>,
    receive_imu: Option<(u16, u16)>,
) {
    // Ends the loop at SIGINT: killed, it would leave its shared-memory segment behind.
    let stop = ros_common::lifecycle::stop_flag_at_signal();
    let (w, h) = if kind == "image4k" { (3840, 2160) } else { (1920, 1080) };
    let mut shm = receive_shm.and_then(|name| ShmFrames::open(name, w * h * 3, &stop));
    // The bridge's own receive buffer, so that the kernel drops nothing the bridge would keep.
    let rcvbuf = rflysim_ros::settings::param::RCVBUF_BYTES.default_as();
    let mut receiver = receive_port.map(|port| {
        let (sock, _) = ros_common::net::udp_receiver(std::net::Ipv4Addr::UNSPECIFIED, port, rcvbuf).unwrap();
        sock.set_nonblocking(false).unwrap();
        // Short enough to see the stop once the emulator has gone.
        sock.set_read_timeout(Some(Duration::from_millis(100))).unwrap();
        // Room for a bgr8 frame and its headers.
        (sock, vec![0u8; if kind == "image4k" { 32 << 20 } else { 8 << 20 }])
    });
    let mut imu_samples = receive_imu.map(|(copter, hz)| ImuSamples::open(copter, hz));
    let ctx = r2r::Context::create().unwrap();
    let mut node = r2r::Node::create(ctx, "rflysim_bench_reference", "").unwrap();
    let qos = ros_common::qos::sensor_publisher(ros_common::qos::DEFAULT_SENSOR_DEPTH);
    let topic = &format!("/rflysim_bench/reference_{kind}");
    let period = (rate > 0.0).then(|| Duration::from_secs_f64(1.0 / rate));
    let mut next = Instant::now();
    // Spun now and then, not at every message: at the IMU's 1000 Hz a spin
    // a message would put a wait set's cost on the floor the bridge is
    // measured against (below 100 Hz every message is still spun).
    let spin_period = Duration::from_millis(10);
    let mut last_spin = Instant::now();
    let stamp = || ros_common::time::to_ros_time(wall());
    macro_rules! run {
        ($msg:expr, $t:ty) => {{
            let p = node.create_publisher::<$t>(topic, qos).unwrap();
            let mut msg = $msg;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                if let Some(per) = period {
                    let now = Instant::now();
                    if now < next {
                        std::thread::sleep(next - now);
                    }
                    next += per;
                }
                if let Some((sock, frame)) = receiver.as_mut() {
                    if !receive_frame(sock, frame) {
                        continue;
                    }
                }
                if let Some(samples) = imu_samples.as_mut() {
                    if !samples.next() {
                        continue;
                    }
                }
                msg.header.stamp = stamp();
                if let Some(frames) = shm.as_mut() {
                    let Some(t) = frames.next(&stop) else { break };
                    msg.header.stamp = ros_common::time::to_ros_time(t);
                }
                let _ = p.publish(&msg);
                if last_spin.elapsed() >= spin_period {
                    node.spin_once(Duration::ZERO);
                    last_spin = Instant::now();
                }
            }
        }};
    }
    if kind == "image" {
        run!(image_1080p(), Image)
    } else if kind == "image4k" {
        run!(image(3840, 2160), Image)
    } else if kind == "imu" {
        run!(imu_of_copter_1(), Imu)
    } else {
        run!(cloud_100k(), PointCloud2)
    }
}
