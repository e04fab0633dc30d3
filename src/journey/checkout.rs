//! Checkout journeys (being built): see the module docs once complete.

use super::workflow::Step;
use super::JourneyOutput;
use crate::domain::event::{CheckoutAttempt, JourneyParams, PaymentUpdate};
use worker::{Env, Result};

pub async fn started(_step: &Step, _env: &Env, _params: &JourneyParams, _a: &CheckoutAttempt) -> Result<JourneyOutput> {
    Ok(JourneyOutput::new("checkout_started"))
}

pub async fn payment_updated(_step: &Step, _env: &Env, _params: &JourneyParams, _p: &PaymentUpdate) -> Result<JourneyOutput> {
    Ok(JourneyOutput::new("payment_updated"))
}
