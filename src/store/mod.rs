//! D1: the engine's own record of contacts, bookings, raw events and every email.
//! One file per table group; every query here is covered by an index in `migrations/`.

pub mod admin;
pub mod bookings;
pub mod calendar;
pub mod campaigns;
pub mod checkout;
pub mod compensation;
pub mod digest;
pub mod emails;
pub mod guest_locale;
pub mod hotel_zones;
pub mod inbound;
pub mod ownership;
pub mod payments;
pub mod raw_events;
pub mod refunds;
pub mod repairs;
pub mod schedule;
pub mod suppressions;
pub mod webhooks;

use wasm_bindgen::JsValue;

/// A bind value for a D1 statement.
pub(crate) fn s(v: &str) -> JsValue {
    JsValue::from_str(v)
}

/// An optional text bind value (`NULL` when absent).
pub(crate) fn opt(v: Option<&str>) -> JsValue {
    v.map(JsValue::from_str).unwrap_or(JsValue::NULL)
}

/// An integer bind value (D1 numbers are f64; our integers stay below 2^53).
pub(crate) fn n(v: i64) -> JsValue {
    JsValue::from_f64(v as f64)
}

/// Rows changed by a write, from D1's result metadata.
pub(crate) fn changes(r: &worker::D1Result) -> usize {
    r.meta().ok().flatten().and_then(|m| m.changes).unwrap_or(0)
}

/// D1 rows a statement read (`meta.rows_read`, 0 when absent).
pub(crate) fn rows_read(r: &worker::D1Result) -> u64 {
    r.meta()
        .ok()
        .flatten()
        .and_then(|m| m.rows_read)
        .map_or(0, |n| n as u64)
}

/// The sweeper's rotating read of one kind of work, at most `limit` rows: first `again` (work it
/// looked at before and left, at most half the batch), then `new` (work it never looked at) for
/// the rest, so work it must keep leaving never hides newer work. Each query's SQL ends with the
/// `LIMIT` placeholder numbered one past its binds; the limit is bound here. Returns the rows in
/// that order with the D1 rows read by both.
pub(crate) async fn again_then_new<T: serde::de::DeserializeOwned>(
    db: &worker::D1Database,
    again: (&str, &[JsValue]),
    new: (&str, &[JsValue]),
    limit: u32,
) -> worker::Result<(Vec<T>, u64)> {
    let with_limit = |binds: &[JsValue], limit: u32| {
        let mut all = binds.to_vec();
        all.push(n(i64::from(limit)));
        all
    };
    let first = db
        .prepare(again.0)
        .bind(&with_limit(again.1, limit / 2))?
        .all()
        .await?;
    let mut read = rows_read(&first);
    let mut rows: Vec<T> = first.results()?;
    let left = limit.saturating_sub(u32::try_from(rows.len()).unwrap_or(limit));
    if left > 0 {
        let second = db
            .prepare(new.0)
            .bind(&with_limit(new.1, left))?
            .all()
            .await?;
        read += rows_read(&second);
        rows.extend(second.results::<T>()?);
    }
    Ok((rows, read))
}

/// [`again_then_new`] over a sweeper's partial index: `select` is the `SELECT … FROM … INDEXED BY
/// … WHERE …` that repeats the index's own condition; `again` is what it left before
/// `checked_before_ms` (ms UTC, `swept_at_ms` set), least recently looked at first; `new` is what
/// it never looked at (`swept_at_ms = 0`) whose `since` column is before `before_ms` (ms UTC),
/// oldest first.
pub(crate) async fn swept_then_new<T: serde::de::DeserializeOwned>(
    db: &worker::D1Database,
    select: &str,
    since: &str,
    before_ms: i64,
    checked_before_ms: i64,
    limit: u32,
) -> worker::Result<(Vec<T>, u64)> {
    let again =
        format!("{select} AND swept_at_ms > 0 AND swept_at_ms < ?1 ORDER BY swept_at_ms LIMIT ?2");
    let new = format!("{select} AND swept_at_ms = 0 AND {since} < ?1 ORDER BY {since} LIMIT ?2");
    again_then_new(
        db,
        (&again, &[n(checked_before_ms)]),
        (&new, &[n(before_ms)]),
        limit,
    )
    .await
}

/// The first row `sql` finds with its `?1` bound to `key` (`None` when it finds none): the
/// reads of one row by its id.
pub(crate) async fn row_by<T: serde::de::DeserializeOwned>(
    db: &worker::D1Database,
    sql: &str,
    key: &str,
) -> worker::Result<Option<T>> {
    db.prepare(sql).bind(&[s(key)])?.first(None).await
}

/// The rows of one statement's result in a batch (none when the batch has no such result).
pub(crate) fn rows<T: serde::de::DeserializeOwned>(
    r: Option<&worker::D1Result>,
) -> worker::Result<Vec<T>> {
    match r {
        Some(r) => r.results::<T>(),
        None => Ok(Vec::new()),
    }
}

/// Runs one write; `true` when it changed exactly one row (a row inserted once, a state moved
/// by this call and not by a racing one).
pub(crate) async fn changed_one(
    db: &worker::D1Database,
    sql: &str,
    binds: &[JsValue],
) -> worker::Result<bool> {
    let r = db.prepare(sql).bind(binds)?.run().await?;
    Ok(changes(&r) == 1)
}

/// Runs `sql` once per bind row, all in one D1 batch (one round trip; nothing when `rows` is
/// empty).
pub(crate) async fn run_each(
    db: &worker::D1Database,
    sql: &str,
    rows: impl IntoIterator<Item = Vec<JsValue>>,
) -> worker::Result<()> {
    let statements = rows
        .into_iter()
        .map(|binds| db.prepare(sql).bind(&binds))
        .collect::<worker::Result<Vec<_>>>()?;
    if !statements.is_empty() {
        db.batch(statements).await?;
    }
    Ok(())
}
