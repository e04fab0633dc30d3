//! liteAPI static data (the liteAPI API reference, <https://docs.liteapi.travel>): the hotel's
//! coordinates, for its local time zone. Parsing is [`crate::sources::hotel_data`].

use super::{endpoint, get, SupplierError};
use crate::config::Config;
use crate::domain::event::HotelLocation;
use crate::sources::hotel_data;

const API: &str = "hotel data API";

/// `GET {LITEAPI_DATA_BASE_URL}/data/hotel?hotelId=<id>` with `X-API-Key: {LITEAPI_API_KEY}` →
/// `data.location{latitude,longitude}`. The caller checks that a key is configured.
pub async fn hotel_location(cfg: &Config, hotel_id: &str) -> Result<HotelLocation, SupplierError> {
    let url = endpoint(
        API,
        &cfg.liteapi_data_base_url,
        "/data/hotel",
        &[("hotelId", hotel_id)],
    )?;
    let body = get(
        API,
        &url,
        &[
            ("X-API-Key", cfg.liteapi_api_key.as_str()),
            ("Accept", "application/json"),
        ],
    )
    .await?;
    hotel_data::parse_hotel_location(&body)
        .map_err(|error| SupplierError::Parse { api: API, error })
}
