//! Duffel airline-initiated changes
//! (<https://duffel.com/docs/api/airline-initiated-changes>): the v2
//! `order.airline_initiated_change_detected` webhook carries only ids, so the journey lists the
//! order's changes here. Parsing is [`crate::sources::duffel::parse_aic_list`].

use super::{endpoint, get, SupplierError};
use crate::config::Config;
use crate::domain::event::{BookingRef, FlightChange};
use crate::sources::duffel;

const API: &str = "Duffel airline_initiated_changes";

/// `GET {DUFFEL_API_BASE_URL}/air/airline_initiated_changes?order_id=<order>` with
/// `Authorization: Bearer {DUFFEL_API_TOKEN}` and `Duffel-Version: v2` → one [`FlightChange`] per
/// change of the order.
pub async fn airline_initiated_changes(
    cfg: &Config,
    order_id: &BookingRef,
) -> Result<Vec<FlightChange>, SupplierError> {
    let url = endpoint(
        API,
        &cfg.duffel_api_base_url,
        "/air/airline_initiated_changes",
        &[("order_id", order_id.as_str())],
    )?;
    let bearer = format!("Bearer {}", cfg.duffel_api_token);
    let body = get(
        API,
        &url,
        &[
            ("Authorization", bearer.as_str()),
            ("Duffel-Version", "v2"),
            ("Accept", "application/json"),
        ],
    )
    .await?;
    duffel::parse_aic_list(&body, order_id)
        .map_err(|error| SupplierError::Parse { api: API, error })
}
