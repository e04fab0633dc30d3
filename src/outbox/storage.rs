//! The object's SQLite access: statements that count the rows SQLite read (the cost figures of
//! `GET /state`), and the `state` table of named integers (next client slot, provider pauses,
//! marketing hold, last alarm's cost, schema version).

use super::Outbox;
use serde::Deserialize;
use worker::{Result, SqlStorage, SqlStorageValue as V};

/// A key of the `state` table; its stored name is the snake_case variant name
/// (`NextSlotAtMs` → `next_slot_at_ms`). Every value is an integer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::IntoStaticStr, strum::EnumIter)]
#[strum(serialize_all = "snake_case")]
pub(super) enum StateKey {
    /// When the client lane opens again, ms UTC (0 or absent: open).
    NextSlotAtMs,
    /// The main provider is paused until then, ms UTC (daily limit, refused credentials).
    MainPausedUntilMs,
    /// SMTP is paused until then, ms UTC (refused credentials).
    SmtpPausedUntilMs,
    /// Marketing is held (daily cap reached) until then, ms UTC.
    MarketingHeldUntilMs,
    /// Cost of the last alarm: SQLite rows read.
    LastAlarmRowsRead,
    /// Cost of the last alarm: wall time, ms.
    LastAlarmMs,
    /// Version of the schema this instance was migrated to (`schema.rs`).
    SchemaVersion,
    /// While a catch-up runs: when the fast lane (urgent and booking email) opens again, ms UTC.
    FastSlotAtMs,
    /// The catch-up's gap, ms (`crate::domain::outbox::backlog::CatchUp`); 0 or absent: none.
    CatchUpGapMs,
    /// The catch-up ends then, ms UTC.
    CatchUpUntilMs,
    /// The UTC day (days since the epoch) the owner was last alerted about the backlog.
    BacklogAlertedDay,
    /// Why the main provider is paused (`PauseCause::stored`; 0 or absent: the operator's pause
    /// or none).
    MainPauseCause,
    /// Why SMTP is paused (as [`StateKey::MainPauseCause`]).
    SmtpPauseCause,
    /// The main provider's settings when a credentials or configuration pause was recorded
    /// (`crate::domain::outbox::SettingsFingerprint::whole`).
    MainPauseFingerprint,
    /// The same, one byte per setting (`SettingsFingerprint::per_setting`).
    MainPauseSettings,
    /// SMTP's settings when a credentials or configuration pause was recorded.
    SmtpPauseFingerprint,
    /// The same, one byte per setting.
    SmtpPauseSettings,
    /// The owner route failed and is not tried again before then, ms UTC.
    OwnerRoutePausedUntilMs,
}

impl StateKey {
    /// The stored name.
    pub(super) fn as_str(self) -> &'static str {
        self.into()
    }
}

/// One integer column named `value` (counts, `seq AS value`, `state.value`).
#[derive(Deserialize)]
pub(super) struct ValueRow {
    pub(super) value: Option<i64>,
}

impl Outbox {
    pub(super) fn sql(&self) -> SqlStorage {
        self.state.storage().sql()
    }

    /// Runs a statement, counting the rows SQLite read for it (see `rows_read`).
    pub(super) fn exec(&self, query: &str, binds: Vec<V>) -> Result<worker::SqlCursor> {
        let cursor = self.sql().exec(query, Some(binds))?;
        self.rows_read
            .set(self.rows_read.get() + cursor.rows_read());
        Ok(cursor)
    }

    /// Runs a query and returns its rows, counting rows read (for the cost figures in `/state`).
    pub(super) fn rows<T: for<'de> Deserialize<'de>>(
        &self,
        query: &str,
        binds: Vec<V>,
    ) -> Result<Vec<T>> {
        // Not `self.exec`: rows are counted once, after the cursor was read.
        let cursor = self.sql().exec(query, Some(binds))?;
        let rows = cursor.to_array::<T>()?;
        self.rows_read
            .set(self.rows_read.get() + cursor.rows_read());
        Ok(rows)
    }

    /// The first `value` of a query answering one integer column, if any.
    pub(super) fn first_value(&self, query: &str, binds: Vec<V>) -> Result<Option<i64>> {
        let rows: Vec<ValueRow> = self.rows(query, binds)?;
        Ok(rows.into_iter().next().and_then(|r| r.value))
    }

    pub(super) fn get_state(&self, key: StateKey) -> Result<Option<i64>> {
        self.first_value(
            "SELECT value FROM state WHERE key = ?",
            vec![key.as_str().into()],
        )
    }

    /// Removes `key` (it reads as absent afterwards).
    pub(super) fn delete_state(&self, key: StateKey) -> Result<()> {
        self.exec("DELETE FROM state WHERE key = ?", vec![key.as_str().into()])?;
        Ok(())
    }

    pub(super) fn set_state(&self, key: StateKey, value: i64) -> Result<()> {
        self.exec(
            "INSERT INTO state (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            vec![key.as_str().into(), value.into()],
        )?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::StateKey;
    use strum::IntoEnumIterator;

    #[test]
    fn state_keys_keep_their_stored_names() {
        let names: Vec<&str> = StateKey::iter().map(StateKey::as_str).collect();
        assert_eq!(
            names,
            [
                "next_slot_at_ms",
                "main_paused_until_ms",
                "smtp_paused_until_ms",
                "marketing_held_until_ms",
                "last_alarm_rows_read",
                "last_alarm_ms",
                "schema_version",
                "fast_slot_at_ms",
                "catch_up_gap_ms",
                "catch_up_until_ms",
                "backlog_alerted_day",
                "main_pause_cause",
                "smtp_pause_cause",
                "main_pause_fingerprint",
                "main_pause_settings",
                "smtp_pause_fingerprint",
                "smtp_pause_settings",
                "owner_route_paused_until_ms",
            ]
        );
    }
}
