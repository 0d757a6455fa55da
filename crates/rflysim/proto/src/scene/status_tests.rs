use super::*;
use crate::scene::tests::hex;

pub(crate) fn crash() -> VehicleCrashData {
    VehicleCrashData {
        copter_id: 1,
        vehicle_type: 3,
        crash: CrashType::Ground,
        runned_time: 7.25,
        vel_ned: [0.5, 0.0, 0.0],
        pos_ned: [1.0, 2.0, 0.25],
        crash_pos: [1.0, 2.0, 0.0],
        target_pos: [0.0, 0.0, 0.5],
        euler: [0.0, 0.0, 0.125],
        motor_rpm: [1000.0, 1000.0, 1000.0, 1000.0, 0.0, 0.0, 0.0, 0.0],
        rays: [100.0, 100.0, 100.0, 100.0, 100.0, 0.25],
        crashed_name: "Landscape_1".into(),
    }
}

#[test]
fn crash_data_is_what_python_packs() {
    // struct.pack('4i1d29f20s', 1234567897, 1, 3, -2, 7.25, <the fields above>, b'Landscape_1')
    let want = hex(
        "d90296490100000003000000feffffff0000000000001d400000003f00000000000000000000803f000000400000803e0000803f\
         000000400000000000000000000000000000003f00000000000000000000003e00007a4400007a4400007a4400007a440000000000\
         00000000000000000000000000c8420000c8420000c8420000c8420000c8420000803e4c616e6473636170655f3100000000000000\
         0000",
    );
    assert_eq!(crash().encode(), want);
    assert_eq!(
        StatusDatagram::decode(&want).unwrap(),
        StatusDatagram::VehicleCrashData(crash())
    );
    assert_eq!(
        [-2, -1, 0, 4, -7].map(CrashType::from_code),
        [
            CrashType::Ground,
            CrashType::SceneObject,
            CrashType::None,
            CrashType::Vehicle(4),
            CrashType::Unknown(-7)
        ]
    );
    assert!([-7, -2, -1, 0, 1, i32::MAX, i32::MIN]
        .iter()
        .all(|&c| CrashType::from_code(c).code() == c));
}

#[test]
fn names_are_cut_to_their_field_and_read_up_to_the_first_nul() {
    let long = VehicleCrashData {
        crashed_name: "a_name_longer_than_twenty_bytes".into(),
        ..crash()
    };
    let b = long.encode();
    assert_eq!(b.len(), VehicleCrashData::LEN);
    assert_eq!(
        VehicleCrashData::decode(&b).unwrap().crashed_name,
        "a_name_longer_than_t"
    );
    let mut odd = crash().encode();
    odd[140..143].copy_from_slice(&[0xFF, b'x', 0]);
    assert_eq!(VehicleCrashData::decode(&odd).unwrap().crashed_name, "\u{FFFD}x");
}

pub(crate) fn copter() -> CopterData {
    CopterData {
        copter_id: 5,
        pose: PoseAndBox {
            pos: [1.0, 2.0, -3.0],
            euler: [0.0, 0.0, 1.5],
            quat: Some([1.0, 0.0, 0.0, 0.0]),
            box_origin: [1.0, 2.0, -3.0],
            box_extent: [0.275, 0.275, 0.15],
            time_stamp: 3.5,
        },
    }
}

fn building() -> ObjectData {
    ObjectData {
        seq_id: 0,
        pose: PoseAndBox {
            pos: [16.0, 0.0, 0.0],
            euler: [0.0; 3],
            quat: Some([1.0, 0.0, 0.0, 0.0]),
            box_origin: [16.0, 0.0, -3.0],
            box_extent: [1.5, 1.5, 3.0],
            time_stamp: 2.0,
        },
        name: "Building_1".into(),
    }
}

#[test]
fn copter_and_object_data_are_what_python_packs_in_both_forms() {
    // struct.pack('2i16f1d', 1234567891, 5, 1, 2, -3, 0, 0, 1.5, 1, 0, 0, 0, 1, 2, -3, 0.275, 0.275, 0.15, 3.5)
    let want = hex(
        "d3029649050000000000803f00000040000040c000000000000000000000c03f0000803f0000000000000000000000000000803f\
         00000040000040c0cdcc8c3ecdcc8c3e9a99193e0000000000000c40",
    );
    assert_eq!(copter().encode(), want);
    assert_eq!(
        StatusDatagram::decode(&want).unwrap(),
        StatusDatagram::CopterData(copter())
    );
    // struct.pack('2i16f1d32s', 1234567891, 0, 16, 0, 0, 0, 0, 0, 1, 0, 0, 0, 16, 0, -3, 1.5, 1.5, 3, 2.0, b'Building_1')
    let want = hex(
        "d3029649000000000000804100000000000000000000000000000000000000000000803f00000000000000000000000000008041\
         00000000000040c00000c03f0000c03f0000404000000000000000404275696c64696e675f3100000000000000000000000000000000\
         000000000000",
    );
    assert_eq!(building().encode(), want);
    assert_eq!(
        StatusDatagram::decode(&want).unwrap(),
        StatusDatagram::ObjectData(building())
    );
    // The older forms: no quaternion.
    let old = CopterData {
        pose: PoseAndBox {
            quat: None,
            ..copter().pose
        },
        ..copter()
    };
    assert_eq!(old.encode().len(), CopterData::LEGACY_LEN);
    assert_eq!(CopterData::decode(&old.encode()).unwrap(), old);
    let old = ObjectData {
        pose: PoseAndBox {
            quat: None,
            ..building().pose
        },
        ..building()
    };
    assert_eq!(old.encode().len(), ObjectData::LEGACY_LEN);
    assert_eq!(
        StatusDatagram::decode(&old.encode()).unwrap(),
        StatusDatagram::ObjectData(old)
    );
}

#[test]
fn copter_sim_crash_takes_either_checksum_and_sil_data_reads_back() {
    // struct.pack('iii', 1234567890, 4, 2)
    let sdk = hex("d20296490400000002000000");
    let crash = CopterSimCrash {
        copter_id: 4,
        target_id: 2,
    };
    assert_eq!(crash.encode(), sdk);
    let mut documented = sdk.clone();
    documented[0] = 0xD3;
    for d in [&sdk, &documented] {
        assert_eq!(
            StatusDatagram::decode(d).unwrap(),
            StatusDatagram::CopterSimCrash(crash)
        );
    }
    documented[0] = 0xD4;
    assert!(matches!(
        StatusDatagram::decode(&documented),
        Err(DecodeError::Checksum { .. })
    ));
    let sil = SilIntFloat {
        copter_id: 2,
        ints: [1, 2, 3, 4, 5, 6, 7, 8],
        floats: std::array::from_fn(|i| i as f32 * 0.5),
    };
    // struct.pack('10i20f', 1234567897, 2, *range(1, 9), *[x * 0.5 for x in range(20)])
    let want = hex(
        "d9029649020000000100000002000000030000000400000005000000060000000700000008000000000000000000003f0000\
         803f0000c03f0000004000002040000040400000604000008040000090400000a0400000b0400000c0400000d0400000e040\
         0000f04000000041000008410000104100001841",
    );
    assert_eq!(sil.encode(), want);
    assert_eq!(StatusDatagram::decode(&want).unwrap(), StatusDatagram::SilIntFloat(sil));
}

#[test]
fn the_status_port_is_read_by_length_then_checksum() {
    let camera = CameraData {
        seq_id: 2,
        type_id: 9,
        data_height: 720,
        data_width: 1280,
        camera_fov: 60.0,
        pos_ue: [1.0, 2.0, -3.0],
        ang_euler: [0.0; 3],
        ang_quat: Some([1.0, 0.0, 0.0, 0.0]),
        time_stamp: 1.0,
    };
    let echo = GimbalEcho::decode(
        &crate::request::VisionSensorReq::default().encode(crate::request::RequestForm::Gimbal148, 12346),
    )
    .unwrap();
    let all = [
        StatusDatagram::VehicleCrashData(crash()),
        StatusDatagram::CopterData(copter()),
        StatusDatagram::ObjectData(building()),
        StatusDatagram::CameraData(camera),
        StatusDatagram::CameraData(CameraData {
            ang_quat: None,
            ..camera
        }),
        StatusDatagram::CopterSimCrash(CopterSimCrash {
            copter_id: 1,
            target_id: 2,
        }),
        StatusDatagram::SilIntFloat(SilIntFloat {
            copter_id: 1,
            ints: [0; 8],
            floats: [0.0; 20],
        }),
        StatusDatagram::GimbalEcho(echo),
    ];
    for d in &all {
        assert_eq!(&StatusDatagram::decode(&d.encode()).unwrap(), d);
    }
    // 120 and 160 share a checksum, 64/80/96/112 another: the length tells.
    let mut as_crash = all[6].encode();
    as_crash.resize(160, 0);
    assert!(matches!(
        StatusDatagram::decode(&as_crash),
        Ok(StatusDatagram::VehicleCrashData(_))
    ));
    assert!(matches!(
        StatusDatagram::decode(&[0; 100]),
        Err(DecodeError::Length { got: 100, .. })
    ));
    let mut wrong = crash().encode();
    wrong[3] ^= 0x80;
    assert!(matches!(
        StatusDatagram::decode(&wrong),
        Err(DecodeError::Checksum { .. })
    ));
}
