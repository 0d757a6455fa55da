use super::*;
use crate::scene::tests::hex;

pub(crate) fn update() -> VehicleUpdate {
    VehicleUpdate {
        placement: Placement::AsSent,
        copter_id: 3,
        vehicle_type: 1003,
        pwms: [1500.0, 1500.0, 1500.0, 1500.0, 0.0, 0.0, 0.0, 0.0],
        vel_ned: [1.5, -2.0, 0.25],
        euler: [0.125, -0.25, 1.5],
        pos_ned: [10.5, -20.25, -5.0],
        runned_time: 12.5,
    }
}

/// `struct.pack('3i14f4d', 1234567890, 3, 1003, *[1500.0]*4, *[0.0]*4,
/// 1.5, -2.0, 0.25, 0.125, -0.25, 1.5, 10.5, -20.25, -5.0, 12.5)`: native
/// alignment, as the SDK sends it.
const PYTHON_VEHICLE_UPDATE: &str = "d202964903000000eb0300000080bb440080bb440080bb440080bb4400000000000000000000\
    0000000000000000c03f000000c00000803e0000003e000080be0000c03f00000000000000000000254000000000004034c0000000\
    00000014c00000000000002940";

#[test]
fn a_vehicle_update_is_what_python_packs_with_native_alignment() {
    let want = hex(PYTHON_VEHICLE_UPDATE);
    assert_eq!(want.len(), 104);
    assert_eq!(update().encode(), want);
    assert_eq!(VehicleUpdate::decode(&want).unwrap(), update());
    // The packed form: the same fields without the 4 bytes at 68.
    let packed: Vec<u8> = want[..68].iter().chain(&want[72..]).copied().collect();
    assert_eq!(VehicleUpdate::decode(&packed).unwrap(), update());
    let ground = VehicleUpdate {
        placement: Placement::OnGround,
        runned_time: VehicleUpdate::UNSET_TIME,
        ..update()
    };
    let back = VehicleUpdate::decode(&ground.encode()).unwrap();
    assert_eq!((back, back.runned_time()), (ground, None));
    let mut wrong = want.clone();
    wrong[0] = 0;
    assert!(matches!(
        VehicleUpdate::decode(&wrong),
        Err(DecodeError::Checksum { .. })
    ));
    assert!(matches!(
        VehicleUpdate::decode(&want[..103]),
        Err(DecodeError::Length { .. })
    ));
}

#[test]
fn the_newest_sdk_s_form_has_gps_ints_and_its_own_checksum() {
    // struct.pack('6i14f4d', 1234567891, 3, 1003, 0, 0, 0, <the fields above>)
    let mut p = Writer::with_capacity(112);
    p.i32(1_234_567_891).i32(3).i32(1003).i32s(&[0; 3]);
    let u = update();
    p.f32s(&u.pwms)
        .f32s(&u.vel_ned)
        .f32s(&u.euler)
        .f64s(&u.pos_ned)
        .f64(u.runned_time);
    let p = p.finish();
    assert_eq!(p.len(), VehicleUpdate::GPS_LEN);
    assert_eq!(VehicleUpdate::decode(&p).unwrap(), u);
    let mut wrong = p.clone();
    wrong[..4].copy_from_slice(&1_234_567_890i32.to_le_bytes());
    assert!(VehicleUpdate::decode(&wrong).is_err());
}

#[test]
fn simple_updates_are_what_python_packs() {
    let simple = SimpleVehicleUpdate {
        placement: Placement::OnGround,
        copter_id: 2,
        vehicle_type: 3,
        motor_rpm_mean: 1000.0,
        pos_ned: [1.0, 2.0, -3.0],
        euler: [0.0, 0.5, -1.0],
        scale: None,
    };
    // struct.pack('3i7f', 1234567891, 2, 3, 1000.0, 1.0, 2.0, -3.0, 0.0, 0.5, -1.0)
    let want = hex("d3029649020000000300000000007a440000803f00000040000040c0000000000000003f000080bf");
    assert_eq!(simple.encode(), want);
    assert_eq!(SimpleVehicleUpdate::decode(&want).unwrap(), simple);
    let scaled = SimpleVehicleUpdate {
        placement: Placement::AsSent,
        vehicle_type: 30,
        scale: Some([2.0, 2.0, 0.5]),
        ..simple
    };
    // struct.pack('3i10f', 1234567890, 2, 30, 1000.0, 1.0, 2.0, -3.0, 0.0, 0.5, -1.0, 2.0, 2.0, 0.5)
    let want =
        hex("d2029649020000001e00000000007a440000803f00000040000040c0000000000000003f000080bf00000040000000400000003f");
    assert_eq!(scaled.encode(), want);
    assert_eq!(SimpleVehicleUpdate::decode(&want).unwrap(), scaled);
    let pose = PoseDatagram::decode(&want).unwrap().poses().next().unwrap();
    assert_eq!(
        (pose.pos_ned, pose.scale, pose.motor_rpm[7]),
        ([1.0, 2.0, -3.0], [2.0, 2.0, 0.5], 1000.0)
    );
}

pub(crate) fn three() -> [PlacedVehicle; 3] {
    let v = |id, vehicle_type, pos_ned, euler, scale, motor_rpm_mean| PlacedVehicle {
        id,
        vehicle_type,
        pos_ned,
        euler,
        scale,
        motor_rpm_mean,
    };
    [
        v(1, 3, [1.0, 2.0, -3.0], [0.0, 0.0, 0.5], [1.0; 3], 1000.0),
        v(2, 3, [4.0, 5.0, -6.0], [0.25, 0.0, 0.0], [2.0, 2.0, 0.5], 1000.0),
        v(3, 1003, [7.5, 8.0, -0.5], [0.0, -0.125, 0.0], [1.0; 3], 0.0),
    ]
}

#[test]
fn three_vehicles_in_a_multi_update_are_what_python_packs() {
    // struct.pack('i200H600f300H100f', 1234567891, 1, 2, 3, 0…, 3, 3, 1003, 0…,
    // <positions>, <angles>, 100, 100, 100, 200, 200, 50, 100, 100, 100, 0…,
    // 1000, 1000, 0…): its non-zero bytes, by offset.
    let runs = [
        (0, "d30296490100020003"),
        (204, "03000300eb03"),
        (
            406,
            "803f00000040000040c0000080400000a0400000c0c00000f04000000041000000bf",
        ),
        (1615, "3f0000803e"),
        (1635, "be"),
        (2804, "640064006400c800c80032006400640064"),
        (3406, "7a4400007a44"),
    ];
    let mut want = vec![0u8; MultiVehicleUpdate::LEN];
    for (at, bytes) in runs {
        let b = hex(bytes);
        want[at..at + b.len()].copy_from_slice(&b);
    }
    let mut buf = [0xAAu8; MultiVehicleUpdate::LEN];
    assert_eq!(
        MultiVehicleUpdate::encode_into(Placement::OnGround, &three(), &mut buf),
        3
    );
    assert_eq!(&buf[..], &want[..]);
    let m = MultiVehicleUpdate::decode(&want).unwrap();
    assert_eq!(m.placement, Placement::OnGround);
    assert_eq!(m.vehicles().copied().collect::<Vec<_>>(), three());
    assert_eq!(m.encode(), want);
    let poses: Vec<_> = PoseDatagram::decode(&want).unwrap().poses().collect();
    assert_eq!(poses.len(), 3);
    assert_eq!(
        (poses[1].copter_id, poses[1].placement, poses[1].pos_ned),
        (2, Placement::OnGround, [4.0, 5.0, -6.0])
    );
}

#[test]
fn scales_travel_as_rounded_clamped_hundredths() {
    assert_eq!(
        [1.0, 0.014, 0.016, -3.0, 655.35, 1e9, f32::NAN].map(scale_hundredths),
        [100, 1, 2, 0, 65535, 65535, 0]
    );
}

#[test]
fn many_vehicles_take_one_datagram_per_hundred() {
    let vehicles: Vec<PlacedVehicle> = (1..=250u16)
        .map(|id| PlacedVehicle {
            id,
            scale: [1.0; 3],
            ..Default::default()
        })
        .collect();
    let mut out = vec![0xEE; 7];
    let n = MultiVehicleUpdate::encode_all_into(Placement::AsSent, &vehicles, &mut out);
    assert_eq!(
        (n, out.len(), MultiVehicleUpdate::datagram_count(250)),
        (3, 3 * MultiVehicleUpdate::LEN, 3)
    );
    let got: Vec<MultiVehicleUpdate> = out
        .chunks_exact(MultiVehicleUpdate::LEN)
        .map(|d| MultiVehicleUpdate::decode(d).unwrap())
        .collect();
    let ids: Vec<u16> = got.iter().flat_map(|m| m.vehicles().map(|v| v.id)).collect();
    assert_eq!(ids, (1..=250).collect::<Vec<_>>());
    assert_eq!(got[2].vehicles().count(), 50);
    assert_eq!(MultiVehicleUpdate::datagram_count(0), 0);
    assert_eq!(MultiVehicleUpdate::encode_all_into(Placement::AsSent, &[], &mut out), 0);
    assert!(out.is_empty());
}

#[test]
fn pose_datagrams_are_told_apart_by_length() {
    let single = PoseDatagram::Single(update());
    assert_eq!(PoseDatagram::decode(&single.encode()).unwrap(), single);
    let pose = single.poses().next().unwrap();
    assert_eq!(
        (pose.copter_id, pose.pos_ned, pose.scale, pose.runned_time),
        (3, [10.5, -20.25, -5.0], [1.0; 3], Some(12.5))
    );
    let mut buf = [0u8; MultiVehicleUpdate::LEN];
    MultiVehicleUpdate::encode_into(Placement::AsSent, &[], &mut buf);
    assert_eq!(PoseDatagram::decode(&buf).unwrap().poses().count(), 0);
    assert!(matches!(
        PoseDatagram::decode(&[0; 56]),
        Err(DecodeError::Length { .. })
    ));
}
