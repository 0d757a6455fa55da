//! Process helpers without ROS, shared by the bridges and the emulators.

pub mod cli;
pub mod faults;
pub mod pace_control;
pub mod seeded_rng;
pub mod stderr_queue;
pub mod stop_signal;
