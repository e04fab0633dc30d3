//! What a refund asks for, before Stripe's record fixes the figure: the plan
//! (`crate::domain::payment::compensation::plan_refund`) knows only what the supplier said (its fee, its
//! refund); what was captured, and what remains refundable, is read from Stripe's API by the
//! proof (`crate::domain::payment::payment_proof`), never from a payment webhook's body.

use serde::{Deserialize, Serialize};

/// The refund a plan asks for, in the currency's minor unit (`crate::domain::payment::compensation::to_minor`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "ask", rename_all = "snake_case")]
pub enum RefundAsk {
    /// Everything Stripe says remains refundable on the payment intent.
    All,
    /// The supplier's refund: `minor`, at most what Stripe says was captured.
    UpTo { minor: i64, currency: String },
    /// What Stripe says was captured less the supplier's fee `minor`.
    LessFee { minor: i64, currency: String },
}

impl RefundAsk {
    /// The currency the supplier's figure is in (`None` for [`RefundAsk::All`]).
    pub fn currency(&self) -> Option<&str> {
        match self {
            RefundAsk::All => None,
            RefundAsk::UpTo { currency, .. } | RefundAsk::LessFee { currency, .. } => {
                Some(currency)
            }
        }
    }
}
