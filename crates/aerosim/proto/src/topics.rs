//! AeroSim's topic names: `<prefix>.<actor>.<stream>` and `<prefix>.clock`
//! (the prefix is `aerosim`).

/// The per-actor streams the bridge reads or writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    VehicleState,
    PrimaryFlightDisplayData,
    FlightControlCommand,
    AutopilotCommand,
}

impl Stream {
    pub fn suffix(self) -> &'static str {
        match self {
            Stream::VehicleState => "vehicle_state",
            Stream::PrimaryFlightDisplayData => "primary_flight_display_data",
            Stream::FlightControlCommand => "flight_control_command",
            Stream::AutopilotCommand => "autopilot_command",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Topics {
    prefix: String,
}

impl Topics {
    pub fn new(prefix: &str) -> Self {
        Self {
            prefix: prefix.trim_end_matches('.').to_string(),
        }
    }

    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    pub fn actor(&self, actor: &str, stream: Stream) -> String {
        format!("{}.{actor}.{}", self.prefix, stream.suffix())
    }

    pub fn clock(&self) -> String {
        format!("{}.clock", self.prefix)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_as_aerosim_writes_them() {
        let t = Topics::new("aerosim");
        assert_eq!(t.actor("actor1", Stream::VehicleState), "aerosim.actor1.vehicle_state");
        assert_eq!(
            t.actor("intruder1", Stream::AutopilotCommand),
            "aerosim.intruder1.autopilot_command"
        );
        assert_eq!(t.clock(), "aerosim.clock");
        assert_eq!(Topics::new("aerosim.").clock(), "aerosim.clock");
    }
}
