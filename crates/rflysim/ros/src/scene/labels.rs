//! `rflysim/uav<id>/label` (`rflysim_bridge/VehicleLabel`) → RflySim3D's
//! `CopterMsg`, as RflySim's SDK sends it (see [`rflysim_proto::label`]). A
//! label RflySim3D could not show as asked is refused: logged at a limited
//! rate, counted (`label_refused` in the scene's diagnostics), nothing sent.

use std::sync::Arc;

use futures::StreamExt;
use r2r::rflysim_bridge::msg::VehicleLabel as LabelMsg;
use r2r::Node;

use rflysim_proto::label::{rgb_from_unit, CopterMsg, LabelError, LabelKind, MessageLine, VehicleLabel};

use super::SceneCore;

/// The message a label asks for over vehicle `id`, or why it cannot be sent.
pub fn label_of(id: u16, m: &LabelMsg) -> Result<CopterMsg, LabelError> {
    let kind = match m.kind {
        k if k == LabelMsg::KIND_ID as u8 => LabelKind::Id,
        k if k == LabelMsg::KIND_MESSAGE as u8 => LabelKind::Message {
            seconds: m.display_time,
            line: MessageLine::from_flag(i32::from(m.line)).ok_or(LabelError::Line(i32::from(m.line)))?,
        },
        other => return Err(LabelError::Kind(other)),
    };
    VehicleLabel {
        copter_id: i32::from(id),
        kind,
        text: m.text.clone(),
        rgb: rgb_from_unit(m.color.r, m.color.g, m.color.b)?,
        size: m.size,
    }
    .message()
}

/// Subscribes `rflysim/uav<id>/label` on `node`, and sends each label on a task of its own (returned).
pub fn subscribe(node: &mut Node, core: &Arc<SceneCore>, id: u16) -> Result<tokio::task::JoinHandle<()>, String> {
    let topic = format!("rflysim/uav{id}/label");
    let mut labels = node
        .subscribe::<LabelMsg>(&topic, ros_common::qos::commands())
        .map_err(|e| format!("scene: {topic}: {e}"))?;
    let runtime = core.runtime.clone();
    let core = core.clone();
    Ok(runtime.spawn(async move {
        while let Some(m) = labels.next().await {
            let sent = label_of(id, &m).map_err(|e| e.to_string()).and_then(|msg| {
                core.send(&msg.encode(), Some(core.window))
                    .map(|()| CopterMsg::LEN)
                    .map_err(|e| format!("cannot send: {e}"))
            });
            match sent {
                Ok(bytes) => core.stats.published(bytes),
                Err(why) => {
                    core.stats.drop_frame("label_refused");
                    core.warn(format_args!("{topic} refused, nothing sent: {why}"));
                }
            }
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use r2r::std_msgs::msg::ColorRGBA;

    fn message(text: &str) -> LabelMsg {
        LabelMsg {
            kind: LabelMsg::KIND_MESSAGE as u8,
            text: text.into(),
            color: ColorRGBA {
                r: 1.0,
                g: 0.0,
                b: 1.0,
                a: 1.0,
            },
            size: 20.0,
            display_time: 5.0,
            line: LabelMsg::LINE_NEW as i8,
        }
    }

    #[test]
    fn a_label_becomes_the_sdk_s_message_or_is_refused_with_the_reason() {
        let m = label_of(1000, &message("Hi, \"here's\" | the test string2")).unwrap();
        assert_eq!(
            (m.copter_id, m.disp_flag, m.rgb, m.disp_time, m.font_size),
            (1000, -1, [255, 0, 255], 5.0, 20.0)
        );
        assert_eq!(m.text, "Hi, \"here's\" | the test string2");
        let id = LabelMsg {
            kind: LabelMsg::KIND_ID as u8,
            ..message("uav1")
        };
        let m = label_of(1, &id).unwrap();
        assert_eq!((m.disp_flag, m.disp_time, m.text.as_str()), (0, 1.0, "uav1"));
        let mut first = message("x");
        first.line = 1;
        assert_eq!(label_of(1, &first).unwrap().disp_flag, 1, "the SDK's first message row");
        assert!(matches!(
            label_of(1, &message("a\nb")),
            Err(LabelError::TextControl { ch: '\n', .. })
        ));
        let mut bad = message("x");
        bad.color.g = 2.0;
        assert!(label_of(1, &bad).unwrap_err().to_string().contains("colour g"));
        for line in [0, 6] {
            let mut bad = message("x");
            bad.line = line;
            assert_eq!(label_of(1, &bad), Err(LabelError::Line(i32::from(line))));
        }
        let mut bad = message("x");
        bad.kind = 7;
        assert!(matches!(label_of(1, &bad), Err(LabelError::Kind(7))));
        let mut bad = message("x");
        bad.display_time = f32::NAN;
        assert!(label_of(1, &bad).is_err());
    }
}
