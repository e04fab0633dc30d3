//! A booking's journey, the pure part: the closed sets of a stored booking ([`booking`]), when
//! each scheduled email goes out and how to sleep until then ([`schedule`]), and change detection
//! on what a traveller cares about ([`snapshot`]). The Workflow that carries it out is
//! `crate::journey`.
//!
//! May use: `basics`, `event`, `timezone`.

pub mod booking;
pub mod schedule;
pub mod snapshot;
