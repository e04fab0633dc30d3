//! What happens around a guest's payment: an unfinished checkout and suspected card testing
//! ([`checkout`]), the owner's signed one-click links that answer a hold or a refund
//! ([`action_token`]), the saga's compensation when a supplier fails a paid booking
//! ([`compensation`]), and the proof, from the payment processor's own record, of which payment a
//! compensation may refund ([`payment_proof`]).
//!
//! May use: `basics`, `event`.

pub mod action_token;
pub mod checkout;
pub mod compensation;
pub mod payment_proof;
pub mod refund_ask;
