//! `rflysim/uav<id>/label` (`rflysim_bridge/VehicleLabel`) → RflySim3D's
//! `RflySetIDLabel` / `RflySetMsgLabel`. A label the console could not carry
//! whole (see [`rflysim_proto::label`]) is refused: logged at a limited
//! rate, counted (`label_refused` in the scene's diagnostics), nothing sent.

use std::sync::Arc;

use futures::StreamExt;
use r2r::rflysim_bridge::msg::VehicleLabel as LabelMsg;
use r2r::Node;

use rflysim_proto::label::{rgb_from_unit, LabelError, LabelKind, MessageLine, VehicleLabel};

use super::SceneCore;

/// The label a message asks for over vehicle `id`, or why it cannot be sent.
pub fn label_of(id: u16, m: &LabelMsg) -> Result<VehicleLabel, LabelError> {
    let kind = match m.kind {
        k if k == LabelMsg::KIND_ID as u8 => LabelKind::Id,
        k if k == LabelMsg::KIND_MESSAGE as u8 => LabelKind::Message {
            seconds: m.display_time,
            line: MessageLine::from_flag(i32::from(m.line)).ok_or(LabelError::Line(i32::from(m.line)))?,
        },
        other => return Err(LabelError::Kind(other)),
    };
    let label = VehicleLabel {
        copter_id: i32::from(id),
        kind,
        text: m.text.clone(),
        rgb: rgb_from_unit(m.color.r, m.color.g, m.color.b)?,
        size: m.size,
    };
    // The checks the command makes, here too, so that the caller sends only what passed.
    label.command()?;
    Ok(label)
}

/// Subscribes `rflysim/uav<id>/label` on `node`, and sends each label on a task of its own.
pub fn subscribe(node: &mut Node, core: &Arc<SceneCore>, id: u16) -> Result<(), String> {
    let topic = format!("rflysim/uav{id}/label");
    let mut labels = node
        .subscribe::<LabelMsg>(&topic, ros_common::qos::commands())
        .map_err(|e| format!("scene: {topic}: {e}"))?;
    let core = core.clone();
    tokio::spawn(async move {
        while let Some(m) = labels.next().await {
            let sent = label_of(id, &m).and_then(|l| l.command()).map_err(|e| e.to_string());
            let sent = sent.and_then(|c| {
                core.send(&c.encode(), Some(core.window))
                    .map(|()| c.text().len())
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
    });
    Ok(())
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
    fn a_message_becomes_rflysim3d_s_command_or_is_refused_with_the_reason() {
        let c = label_of(1000, &message("Hi, here's the test string2"))
            .unwrap()
            .command()
            .unwrap();
        assert_eq!(
            c.text(),
            "RflySetMsgLabel 1000 \"Hi, here's the test string2\" FF00FF 20 5 -1"
        );
        let id = LabelMsg {
            kind: LabelMsg::KIND_ID as u8,
            ..message("uav1")
        };
        assert_eq!(
            label_of(1, &id).unwrap().command().unwrap().text(),
            "RflySetIDLabel 1 \"uav1\" FF00FF 20"
        );
        assert!(matches!(
            label_of(1, &message("a|b")),
            Err(LabelError::TextByte { byte: b'|', .. })
        ));
        let mut bad = message("x");
        bad.color.g = 2.0;
        assert!(label_of(1, &bad).unwrap_err().to_string().contains("colour g"));
        let mut bad = message("x");
        bad.line = 5;
        assert!(matches!(label_of(1, &bad), Err(LabelError::Line(5))));
        let mut bad = message("x");
        bad.kind = 7;
        assert!(matches!(label_of(1, &bad), Err(LabelError::Kind(7))));
        let mut bad = message("x");
        bad.display_time = f32::NAN;
        assert!(label_of(1, &bad).is_err());
    }
}
