use super::parse::{format_list, format_number};
use super::*;

const EXAMPLE: &str = r#"
// RflySim Config.json, as users write them
{
  "VisionSensors": [
    {
      "SeqID": 0, "TypeID": 1, "TargetCopter": 1, "TargetMountType": 0,
      "DataWidth": 640, "DataHeight": 480, "DataCheckFreq": 30,
      "SendProtocol": [2, 127, 0, 0, 1, 0, 0, 0],   # raw UDP to this host
      "CameraFOV": 90, "SensorPosXYZ": [0.3, 0, 0], "EularOrQuat": 0,
      "SensorAngEular": [0, 0, 0], "SensorAngQuat": [1, 0, 0, 0],
      "otherParams": [0, 0, 0, 0, 0, 0, 0, 0]
    },
    /* a LiDAR, SeqID auto-incremented */
    {
      "SeqID": 0, "TypeID": 20, "DataWidth": 360.0, "DataHeight": 16,
      "DataCheckFreq": 0, "SendProtocol": [1, 0, 0, 0, 0, 20100, 0, 0],
      "EularOrQuat": 1, "SensorAngQuat": [0.6, 0, 0, 0.8],
      "otherParams": [50, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1],
      "SensorAngEular": [0, 90, 0], "note": "url://not-a-comment#really"
    },
    { "SeqID": 7, "TypeID": 23, "SendProtocol": [0, 0, 0, 0, 0, 0, 0, 0] }
  ]
}"#;

#[test]
fn reads_the_example_with_comments_defaults_and_auto_increment() {
    let s = parse_config(EXAMPLE, AngleUnit::Auto).unwrap();
    assert_eq!(s.len(), 3);
    assert_eq!((s[0].seq_id, s[1].seq_id, s[2].seq_id), (0, 1, 7));
    assert_eq!(s[0].udp_port(), 9999);
    assert_eq!(s[1].udp_port(), 20100);
    assert_eq!(s[2].udp_port(), 10006);
    assert_eq!(s[0].receiver_ip(), Ipv4Addr::LOCALHOST);
    let remote = s[0].with_receiver_ip(Ipv4Addr::new(192, 168, 1, 20));
    assert_eq!(remote.receiver_ip(), Ipv4Addr::new(192, 168, 1, 20));
    assert_eq!(
        (remote.transport(), remote.udp_port()),
        (s[0].transport(), s[0].udp_port())
    );
    assert_eq!(remote.send_protocol[1..5], [192, 168, 1, 20]);
    assert_eq!(remote.with_receiver_ip(Ipv4Addr::LOCALHOST), s[0]);
    assert_eq!(s[0].transport(), Some(Transport::UdpRaw));
    assert_eq!(s[2].transport(), Some(Transport::SharedMemory));
    assert_eq!(s[0].rate_hz(), 30.0);
    assert_eq!(s[1].rate_hz(), 30.0);
    assert!(s[0].legacy_other_params && !s[1].legacy_other_params);
    assert_eq!(s[1].lidar_max_range(), 50.0);
    assert_eq!(s[1].other_params[15], 1.0);
    assert_eq!(s[1].data_width, 360);
    assert_eq!(s[2].size(), (64, 272));
    assert_eq!(s[2].shm_name(), "RflySim3DImg_7");
    assert_eq!(s[0].sensor_pos_xyz, [0.3, 0.0, 0.0]);
}

#[test]
fn quaternion_and_euler_mounts() {
    let s = parse_config(EXAMPLE, AngleUnit::Auto).unwrap();
    assert_eq!(s[0].mount_attitude(), MountAttitude::Euler([0.0; 3]));
    match s[1].mount_attitude() {
        MountAttitude::Quaternion(q) => {
            assert!((q[0] - 0.6).abs() < 1e-6 && (q[3] - 0.8).abs() < 1e-6)
        }
        other => panic!("{other:?}"),
    }
    // 90 > 2π: the file is in degrees.
    assert!(s[1].angles_in_degrees);
    assert!((s[1].mount_euler_rad()[1] - std::f64::consts::FRAC_PI_2).abs() < 1e-9);
    let radians = parse_config(EXAMPLE, AngleUnit::Radians).unwrap();
    assert_eq!(radians[1].mount_euler_rad()[1], 90.0);
}

#[test]
fn errors_name_the_sensor_and_the_field() {
    let bad = |text: &str| parse_config(text, AngleUnit::Auto).unwrap_err().to_string();
    assert_eq!(
        bad(r#"{"VisionSensors":[{"TypeID":1},{"TypeID":"x"}]}"#),
        "VisionSensors[1].TypeID: expected a number, found \"x\""
    );
    assert_eq!(
        bad(r#"{"VisionSensors":[{"TypeID":1,"otherParams":[1,2,3]}]}"#),
        "VisionSensors[0].otherParams: expected 8 or 16 numbers, found 3"
    );
    assert_eq!(
        bad(r#"{"VisionSensors":[{"TypeID":99}]}"#),
        "VisionSensors[0].TypeID: unknown sensor type 99"
    );
    assert_eq!(
        bad(r#"{"VisionSensors":[{"TypeID":1,"SendProtocol":[9,0,0,0,0,0,0,0]}]}"#),
        "VisionSensors[0].SendProtocol[0]: unknown transport 9 (0 shared memory, 1 UDP, 2 UDP raw, 3 UDP PNG)"
    );
    assert_eq!(
        bad(r#"{"VisionSensors":[{"TypeID":1,"DataWidth":-3}]}"#),
        "VisionSensors[0].DataWidth: -3 is not an integer in 0..=65535"
    );
    assert_eq!(
        bad(r#"{"VisionSensors":[{"TypeID":1,"SeqID":2},{"TypeID":1,"SeqID":2}]}"#),
        "VisionSensors[1].SeqID: SeqID 2 is already used by VisionSensors[0]"
    );
    assert_eq!(bad(r#"{"Sensors":[]}"#), "VisionSensors: missing");
    assert!(bad("{").starts_with("not valid JSON"));
}

#[test]
fn comments_inside_strings_are_kept() {
    assert_eq!(strip_comments("{\"a\":\"x//y#z\"} // c"), "{\"a\":\"x//y#z\"} ");
    assert_eq!(strip_comments("1 /* a\nb */ 2"), "1 \n  2");
    assert_eq!(strip_comments("\"q\\\"#\" # c\n3"), "\"q\\\"#\" \n3");
}

/// One sensor with every field RflySim's SDK requires, in the 8-parameter form.
fn complete_sensor(seq_id: u16) -> String {
    format!(
        r#"{{"SeqID": {seq_id}, "TypeID": 1, "TargetCopter": 1, "TargetMountType": 0, "DataWidth": 64,
            "DataHeight": 48, "DataCheckFreq": 10, "SendProtocol": [2, 127, 0, 0, 1, 0, 0, 0], "CameraFOV": 90,
            "SensorPosXYZ": [0, 0, 0], "SensorAngEular": [0, 0, 0], "otherParams": [0, 0, 0, 0, 0, 0, 0, 0]}}"#
    )
}

fn defaults_of(text: &str) -> Vec<String> {
    let report = parse_config_report(text, AngleUnit::Auto).unwrap();
    report.defaulted.iter().map(ToString::to_string).collect()
}

#[test]
fn reports_each_field_the_sdk_needs_and_the_file_left_out() {
    assert_eq!(
        defaults_of(EXAMPLE),
        [
            "sensor 1: defaulted TargetCopter=1, TargetMountType=0, CameraFOV=90, SensorPosXYZ=[0;3]",
            "sensor 7: defaulted TargetCopter=1, TargetMountType=0, DataWidth=0, DataHeight=0, DataCheckFreq=0, \
             CameraFOV=90, SensorPosXYZ=[0;3], SensorAngEular=[0;3], otherParams=[0;16]",
        ]
    );
    let report = parse_config_report(EXAMPLE, AngleUnit::Auto).unwrap();
    assert_eq!(report.sensors, parse_config(EXAMPLE, AngleUnit::Auto).unwrap());
    assert_eq!(report.defaulted.iter().map(|d| d.index).collect::<Vec<_>>(), [1, 2]);
}

#[test]
fn a_complete_sensor_reports_nothing() {
    let text = format!(
        r#"{{"VisionSensors": [{}, {}]}}"#,
        complete_sensor(1),
        complete_sensor(2)
    );
    assert!(defaults_of(&text).is_empty());
}

#[test]
fn quaternion_is_required_only_with_eular_or_quat() {
    let with_flag = r#"{"VisionSensors": [{"SeqID": 2, "TypeID": 20, "TargetCopter": 1, "TargetMountType": 0,
        "DataWidth": 360, "DataHeight": 16, "DataCheckFreq": 10, "SendProtocol": [1, 127, 0, 0, 1, 0, 0, 0],
        "CameraFOV": 90, "SensorPosXYZ": [0, 0, 0], "EularOrQuat": 0, "SensorAngEular": [0, 0, 0],
        "otherParams": [60, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]}]}"#;
    assert_eq!(
        defaults_of(with_flag),
        ["sensor 2: defaulted SensorAngQuat=[1, 0, 0, 0]"]
    );
    let without_flag = with_flag.replace(r#""EularOrQuat": 0,"#, "");
    assert!(defaults_of(&without_flag).is_empty());
}

#[test]
fn a_missing_seq_id_is_reported_as_the_number_it_became() {
    let second = complete_sensor(0).replace(r#""SeqID": 0, "#, "");
    let text = format!(r#"{{"VisionSensors": [{}, {second}]}}"#, complete_sensor(4));
    assert_eq!(defaults_of(&text), ["sensor 5: defaulted SeqID=5"]);
}

#[test]
fn null_counts_as_missing_and_lists_print_each_value_unless_all_equal() {
    let text = complete_sensor(3).replace(r#""TargetMountType": 0"#, r#""TargetMountType": null"#);
    assert_eq!(
        defaults_of(&format!(r#"{{"VisionSensors": [{text}]}}"#)),
        ["sensor 3: defaulted TargetMountType=0"]
    );
    assert_eq!(format_list(&[0.0; 8]), "[0;8]");
    assert_eq!(format_list(&[1.0, 0.0, 0.0, 0.0]), "[1, 0, 0, 0]");
    assert_eq!(format_list(&[0.5]), "[0.5]");
    assert_eq!(format_number(90.0), "90");
}

#[test]
fn the_shipped_config_defaults_nothing() {
    let shipped = include_str!("../../../../../config/Config.json");
    let report = parse_config_report(shipped, AngleUnit::Auto).unwrap();
    assert_eq!(report.sensors.len(), 11);
    assert_eq!(report.defaulted, []);
}

#[test]
fn sensors_sharing_a_udp_port_are_reported() {
    let cfg = parse_config(
        r#"{"VisionSensors":[
            {"SeqID":1,"TypeID":1,"SendProtocol":[1,0,0,0,0,0,0,0]},
            {"SeqID":2,"TypeID":1,"SendProtocol":[1,0,0,0,0,10000,0,0]},
            {"SeqID":3,"TypeID":1,"SendProtocol":[0,0,0,0,0,10000,0,0]},
            {"SeqID":4,"TypeID":1,"SendProtocol":[2,0,0,0,0,0,0,0]}]}"#,
        AngleUnit::Auto,
    )
    .unwrap();
    // 1 → 9999 + 1 = 10000 = 2's port; 3 is shared memory; 4 → 10003.
    assert_eq!(udp_port_clashes(&cfg), vec!["sensors 1 and 2 both use UDP port 10000"]);
    assert!(udp_port_clashes(&cfg[2..]).is_empty());
}

#[test]
fn frame_bounds_follow_the_configured_size() {
    let cfg = parse_config(
        r#"{"VisionSensors":[
            {"SeqID":1,"TypeID":1,"DataWidth":640,"DataHeight":480,"SendProtocol":[2,0,0,0,0,0,0,0]},
            {"SeqID":2,"TypeID":1,"DataWidth":640,"DataHeight":480,"SendProtocol":[1,0,0,0,0,0,0,0]},
            {"SeqID":3,"TypeID":20,"DataWidth":100,"DataHeight":16,"SendProtocol":[1,0,0,0,0,0,0,0]},
            {"SeqID":4,"TypeID":9,"DataWidth":640,"DataHeight":480,"SendProtocol":[2,0,0,0,0,0,0,0]},
            {"SeqID":5,"TypeID":5,"SendProtocol":[1,0,0,0,0,0,0,0]}]}"#,
        AngleUnit::Auto,
    )
    .unwrap();
    let bounds: Vec<Option<usize>> = cfg.iter().map(SensorConfig::max_frame_len).collect();
    assert_eq!(
        bounds,
        vec![
            Some(640 * 480 * 3),
            Some((64 << 10) + 640 * 480 * 6),
            Some(36 + 16 * 1600),
            None,
            Some(56)
        ]
    );
    assert_eq!(cfg[0].max_image_pixels(), Some(4 * 640 * 480));
    assert_eq!(cfg[3].max_image_pixels(), None);
}
