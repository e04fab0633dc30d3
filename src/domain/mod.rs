//! The pure core: decisions from data and time.
//!
//! Nothing in `domain` (or `sources`) may touch `worker`, `js_sys` or `wasm_bindgen`: every function
//! takes its inputs — including `now` and any randomness — as arguments and returns a value, so the
//! whole core runs under plain `cargo test` on the host. `tests/host/core_is_pure.rs` enforces this.
//!
//! The core is grouped by concern, one folder each. A folder may use the folders listed before it,
//! never one after it, and only those its `mod.rs` lists on its `May use:` line
//! (`tests/host/src_layout.rs` checks both; `docs/code-map.md` maps every file):
//!
//! | folder | what lives there |
//! |---|---|
//! | [`basics`] | building blocks that know nothing of bookings: JSON reading, the parse error, supplier text, NFC, stable sorting, secret comparison |
//! | [`event`] | canonical events (what every supplier adapter produces), deterministic ids, who may act on what |
//! | [`timezone`] | hotel and airport time: the IANA database, coordinates → zone, local wall-clock time → instant |
//! | [`i18n`] | the guest's language: Fluent messages, CLDR dates and money |
//! | [`email`] | what an email is: kinds, ranks, audiences, statuses, dedupe keys; its calendar part and reservation markup; the content lock's rules |
//! | [`journey`] | a booking's journey: stored booking kinds and statuses, when scheduled emails go, change detection |
//! | [`payment`] | around a guest's payment: unfinished checkouts and card-testing holds, the owner's one-click links, compensation after a supplier failure, the proof of a payment |
//! | [`webhooks`] | outbound webhooks: event types, envelopes, signing, what each receiver answer means, what each event says |
//! | [`inbound`] | mail that comes back: a guest's reply read, its reply address signed and checked |
//! | [`admin`] | the owner's admin and the operator API: passwords, sessions, the sign-in limit, a booking's timeline, operator requests |
//! | [`outbox`] | sending: pacing, routes and failover, what a refusal means, intent at the send turn, the backlog, the email that travels, Resend and SMTP rules |
//! | [`marketing`] | marketing rules (caps, suppression), the campaign request, one-click unsubscribe |
//! | [`sweeper`] | the sweeper's decisions: cut-offs, the owner's daily digest, reminders and recalls, sends moved to hotel time |
//! | [`render`] | every email and page the engine writes, and the MIME bytes for SMTP |

pub mod admin;
pub mod basics;
pub mod email;
pub mod event;
pub mod i18n;
pub mod inbound;
pub mod journey;
pub mod marketing;
pub mod outbox;
pub mod payment;
pub mod render;
pub mod sweeper;
pub mod timezone;
pub mod webhooks;
