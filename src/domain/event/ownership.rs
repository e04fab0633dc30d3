//! Who may act on what (least authority between suppliers): every booking, checkout attempt and
//! compensation belongs to the source whose event created it, and for the generic source to the
//! **partner** whose key signed that event. An event acts only on records of its own owner; one
//! that names another owner's booking (its id, the booking it replaces, its prebook), or a supplier
//! failure that names a client reference another owner's checkout or booking records (see
//! [`reference_verdict`]), changes nothing, is recorded on its raw event with the reason, and the
//! owner of the business is told once per named record and UTC day.
//!
//! Partners: `GENERIC_WEBHOOK_SECRETS` lists `name=whsec_…` entries (several per name while a key
//! is rotated); an entry without a name belongs to the partner [`DEFAULT_PARTNER`] (the form
//! before partners existed, and the owner of every generic booking stored before them). The same
//! secret under two names is refused (the engine could not tell them apart).
//!
//! Payments are Stripe's, not a supplier's: a compensation refunds a payment only when checkouts
//! or bookings of its own owner record it, never one of another owner's; a payment only the
//! failure names waits for the owner's click (see [`payment_link`]).

use crate::domain::event::{EventId, JourneyParams, Source};
use std::fmt;

/// The partner of every generic secret written without a name, and of the generic bookings
/// stored before partners existed.
pub const DEFAULT_PARTNER: &str = "default";

/// Longest partner name, characters.
pub const MAX_PARTNER_LEN: usize = 32;

/// The authority an event acts with: its source, and for the generic source its partner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner {
    pub source: Source,
    /// `Some(name)` for the generic source (always), `None` for every other source.
    pub partner: Option<String>,
}

impl Owner {
    /// The owner of an event of `source` signed by `partner`. A generic event without a partner
    /// (params written before partners existed) is the [`DEFAULT_PARTNER`]'s; other sources have
    /// no partners, whatever is passed.
    pub fn new(source: Source, partner: Option<&str>) -> Self {
        let partner = match source {
            Source::Generic => Some(
                partner
                    .filter(|p| !p.is_empty())
                    .unwrap_or(DEFAULT_PARTNER)
                    .to_string(),
            ),
            _ => None,
        };
        Self { source, partner }
    }

    /// The owner of a stored row (`source`, `partner` columns). An unknown source name is kept as
    /// no owner at all (`None`): it can never equal an event's owner.
    pub fn stored(source: &str, partner: Option<&str>) -> Option<Self> {
        Source::parse(source).map(|s| Self::new(s, partner))
    }

    /// The value of a `partner` column for this owner (`NULL` for sources without partners).
    pub fn partner_column(&self) -> Option<&str> {
        self.partner.as_deref()
    }
}

/// Defined here rather than beside [`JourneyParams`] so that the canonical events know nothing of
/// ownership (this module reads them, not the reverse).
impl JourneyParams {
    /// The owner this journey acts for: its source and, for the generic source, its partner.
    pub fn owner(&self) -> Owner {
        Owner::new(self.source, self.partner.as_deref())
    }
}

impl fmt::Display for Owner {
    /// `liteapi`, or `generic partner "acme"`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.partner {
            Some(p) => write!(f, "{} partner {p:?}", self.source),
            None => f.write_str(self.source.as_str()),
        }
    }
}

/// May an event of `actor` act on a record stored with (`source`, `partner`)?
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Same source (and partner): it may.
    Own,
    /// Another owner's record: nothing may change. Carries the reason, one line, for the raw
    /// event and the owner's alert.
    Foreign { reason: String },
}

/// The verdict on acting as `actor` on the record `what` (e.g. `booking BK1`) stored with
/// `source` / `partner`.
pub fn judge(actor: &Owner, what: &str, source: &str, partner: Option<&str>) -> Verdict {
    match Owner::stored(source, partner) {
        Some(owner) if owner == *actor => Verdict::Own,
        Some(owner) => Verdict::Foreign {
            reason: format!("{what} belongs to {owner}; this event came from {actor}"),
        },
        None => Verdict::Foreign {
            reason: format!(
                "{what} belongs to an unknown source {source:?}; this event came from {actor}"
            ),
        },
    }
}

/// The first foreign verdict among several records an event names, if any.
pub fn first_foreign(verdicts: impl IntoIterator<Item = Verdict>) -> Option<String> {
    verdicts.into_iter().find_map(|v| match v {
        Verdict::Foreign { reason } => Some(reason),
        Verdict::Own => None,
    })
}

/// One stored record of a client reference (a checkout attempt or a booking that carries it):
/// its owner columns, and whether it is the checkout attempt the event itself names by prebook id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReferenceRecord<'a> {
    pub source: &'a str,
    pub partner: Option<&'a str>,
    pub named_checkout: bool,
}

/// The verdict on `actor` naming client reference `reference` in a supplier failure, from the
/// checkout attempts and bookings that record it. A failure's compensation is keyed by the first
/// of its prebook id, client reference and booking id, and a compensation's owner is the first to
/// open it; so a failure that names another owner's reference would take that checkout's
/// compensation away from its rightful owner (whose own failure is then refused as foreign).
///
/// - Recorded by the checkout attempt the failure names by prebook id (the actor's own: a foreign
///   prebook is refused before this): that checkout vouches for the reference, [`Verdict::Own`],
///   even if another owner also recorded it (a partner cannot block a supplier's compensation by
///   recording a booking with that supplier's reference).
/// - Otherwise, recorded by any record of another owner: [`Verdict::Foreign`].
/// - Otherwise (only the actor's records, or none): [`Verdict::Own`].
pub fn reference_verdict<'a>(
    actor: &Owner,
    reference: &str,
    records: impl IntoIterator<Item = ReferenceRecord<'a>>,
) -> Verdict {
    let what = format!("client reference {reference}");
    let verdicts: Vec<(bool, Verdict)> = records
        .into_iter()
        .map(|r| (r.named_checkout, judge(actor, &what, r.source, r.partner)))
        .collect();
    if verdicts
        .iter()
        .any(|(named, v)| *named && *v == Verdict::Own)
    {
        return Verdict::Own;
    }
    match first_foreign(verdicts.into_iter().map(|(_, v)| v)) {
        Some(reason) => Verdict::Foreign { reason },
        None => Verdict::Own,
    }
}

/// How a payment is tied to the owner of a compensation (see [`payment_link`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PaymentLink {
    /// Checkout attempts or bookings of this owner record it, and none of another owner: the
    /// compensation may refund it (by policy).
    Own,
    /// No checkout or booking records it; only compensations of this owner named it (the first
    /// claim): the owner of the business decides, it is never refunded automatically (Duffel
    /// orders, for one, have no checkout event of their own).
    ClaimOnly,
    /// Another owner's checkout, booking or earlier claim names it: never touched.
    Foreign,
}

/// How a payment is tied to `actor`. `records` are the `(source, partner)` of the checkout
/// attempts and bookings whose payment intent or client reference is the payment's (the
/// suppliers' own records of the checkout); `claims` those of other compensations that named it.
///
/// - When checkouts or bookings record the payment, it is [`PaymentLink::Own`] only if every
///   one of them is the actor's: a payment of another source's checkout is never refunded on
///   this event's word, and one shared by two owners (a trip booked with two suppliers) is
///   left alone.
/// - When nothing but compensations names it, the first claim holds: [`PaymentLink::ClaimOnly`]
///   if no other owner's compensation named it, else [`PaymentLink::Foreign`].
pub fn payment_link<'a>(
    actor: &Owner,
    records: impl IntoIterator<Item = (&'a str, Option<&'a str>)>,
    claims: impl IntoIterator<Item = (&'a str, Option<&'a str>)>,
) -> PaymentLink {
    let mine = |(source, partner): (&str, Option<&str>)| {
        Owner::stored(source, partner).as_ref() == Some(actor)
    };
    let mut records = records.into_iter().peekable();
    let recorded = records.peek().is_some();
    match (recorded, recorded && records.all(mine)) {
        (true, true) => PaymentLink::Own,
        (true, false) => PaymentLink::Foreign,
        (false, _) if claims.into_iter().all(mine) => PaymentLink::ClaimOnly,
        (false, _) => PaymentLink::Foreign,
    }
}

/// The event id a delivery is stored and deduplicated under. Partners choose their own
/// `webhook-id`s, so one partner must not be able to take another's ids: a named partner's ids
/// are kept as `<partner>/<id>`. The [`DEFAULT_PARTNER`]'s ids stay as sent (as they were stored
/// before partners existed) unless they contain `/`, which could mimic another partner's form:
/// those become `default/<id>`. Other sources' ids are unchanged.
pub fn scoped_event_id(
    owner: &Owner,
    id: &EventId,
) -> Result<EventId, crate::domain::event::InvalidValue> {
    match owner.partner.as_deref() {
        None => Ok(id.clone()),
        Some(DEFAULT_PARTNER) if !id.as_str().contains('/') => Ok(id.clone()),
        Some(p) => EventId::parse(&format!("{p}/{}", id.as_str())),
    }
}

/// The dedupe key's reference of the owner's alert about foreign events naming `booking_id` on
/// `day` (UTC `YYYY-MM-DD`): one alert per booking and day, however many events.
pub fn alert_ref(booking_id: &str, day: &str) -> String {
    format!("{booking_id}:{day}")
}

/// A partner name: 1–32 of `a-z 0-9 _ -`, starting with a letter or digit.
pub fn valid_partner_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_lowercase() || c.is_ascii_digit())
        && name.len() <= MAX_PARTNER_LEN
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-')
}

/// One generic secret and the partner that holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartnerSecret {
    pub partner: String,
    /// A Standard Webhooks secret, `whsec_<base64>` (or bare base64).
    pub secret: String,
}

/// Why `GENERIC_WEBHOOK_SECRETS` was refused (the generic source is then off; nothing else is).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PartnerError {
    #[error("partner name {0:?} is not 1-32 of a-z 0-9 _ - (starting with a letter or digit)")]
    BadName(String),
    #[error("the same secret is configured for partners {0:?} and {1:?}: the engine could not tell them apart")]
    Shared(String, String),
}

/// Parses `GENERIC_WEBHOOK_SECRETS`: entries separated by commas or whitespace, each
/// `name=whsec_…` (a named partner) or a secret alone (the [`DEFAULT_PARTNER`]). Several entries
/// may name one partner (rotation). An entry is named only when what follows its first `=` starts
/// with `whsec_`, so a bare base64 secret ending in `=` padding stays a secret. One key under two
/// partner names is refused ([`PartnerError::Shared`]), compared by the key bytes it produces
/// (`whsec_QUFB` and `QUFB` are one key).
pub fn parse_partner_secrets(raw: &str) -> Result<Vec<PartnerSecret>, PartnerError> {
    let mut out: Vec<PartnerSecret> = Vec::new();
    for entry in raw
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|e| !e.is_empty())
    {
        let (partner, secret) = match entry.split_once('=') {
            Some((name, secret)) if secret.starts_with("whsec_") => {
                if !valid_partner_name(name) {
                    return Err(PartnerError::BadName(name.to_string()));
                }
                (name.to_string(), secret.to_string())
            }
            _ => (DEFAULT_PARTNER.to_string(), entry.to_string()),
        };
        // One key under two names, however each is written (with or without `whsec_`).
        let key = crate::domain::basics::secret::standard_webhooks_key(&secret);
        if let Some(other) = out.iter().find(|p| {
            p.partner != partner
                && (p.secret == secret
                    || key.is_some()
                        && crate::domain::basics::secret::standard_webhooks_key(&p.secret) == key)
        }) {
            return Err(PartnerError::Shared(other.partner.clone(), partner));
        }
        out.push(PartnerSecret { partner, secret });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn generic(p: &str) -> Owner {
        Owner::new(Source::Generic, Some(p))
    }

    #[test]
    fn owners_compare_by_source_and_partner() {
        let lite = Owner::new(Source::Liteapi, Some("ignored"));
        assert_eq!(lite.partner, None);
        assert_eq!(Owner::new(Source::Generic, None), generic(DEFAULT_PARTNER));
        assert_eq!(judge(&lite, "booking B", "liteapi", None), Verdict::Own);
        assert_eq!(
            judge(&generic("a"), "booking B", "generic", Some("a")),
            Verdict::Own
        );
        // A generic row stored before partners existed is the default partner's.
        assert_eq!(
            judge(&generic("default"), "booking B", "generic", None),
            Verdict::Own
        );
        let Verdict::Foreign { reason } = judge(&generic("a"), "booking B", "liteapi", None) else {
            panic!("a generic partner acted on a liteAPI booking");
        };
        assert_eq!(
            reason,
            "booking B belongs to liteapi; this event came from generic partner \"a\""
        );
        assert!(matches!(
            judge(&generic("a"), "booking B", "generic", Some("b")),
            Verdict::Foreign { .. }
        ));
        assert!(matches!(
            judge(&lite, "booking B", "generic", Some("a")),
            Verdict::Foreign { .. }
        ));
        assert!(matches!(
            judge(&lite, "booking B", "nonsense", None),
            Verdict::Foreign { .. }
        ));
        assert_eq!(first_foreign([Verdict::Own, Verdict::Own]), None);
    }

    #[test]
    fn a_payment_linked_to_another_owner_is_not_usable() {
        use PaymentLink::*;
        let a = generic("a");
        let lite = Owner::new(Source::Liteapi, None);
        let gen_a = ("generic", Some("a"));
        let gen_b = ("generic", Some("b"));
        let lite_row = ("liteapi", None);
        assert_eq!(payment_link(&a, [], []), ClaimOnly, "nothing links it yet");
        assert_eq!(payment_link(&a, [gen_a], []), Own);
        assert_eq!(payment_link(&a, [gen_a, lite_row], []), Foreign);
        assert_eq!(payment_link(&a, [gen_b], []), Foreign);
        assert_eq!(payment_link(&lite, [lite_row], []), Own);
        // Another owner's compensation naming a payment of this owner's checkout does not take it.
        assert_eq!(payment_link(&lite, [lite_row], [gen_a]), Own);
        assert_eq!(payment_link(&a, [lite_row], [gen_a]), Foreign);
        // Named by compensations only: the first claim holds.
        assert_eq!(payment_link(&lite, [], [gen_a]), Foreign);
        assert_eq!(payment_link(&a, [], [gen_a]), ClaimOnly);
    }

    #[test]
    fn a_failure_may_not_name_another_owners_client_reference() {
        let acme = generic("acme");
        let lite = Owner::new(Source::Liteapi, None);
        let rec = |source, partner, named_checkout| ReferenceRecord {
            source,
            partner,
            named_checkout,
        };
        let lite_attempt = rec("liteapi", None, false);
        // Nothing records it, or only the actor's own records do: the actor's.
        assert_eq!(reference_verdict(&acme, "trip_1", []), Verdict::Own);
        assert_eq!(
            reference_verdict(&lite, "trip_1", [lite_attempt]),
            Verdict::Own
        );
        // A liteAPI checkout records it: a partner naming it is refused.
        let Verdict::Foreign { reason } = reference_verdict(&acme, "trip_1", [lite_attempt]) else {
            panic!("a partner took a liteAPI checkout's reference");
        };
        assert_eq!(
            reason,
            "client reference trip_1 belongs to liteapi; this event came from generic partner \"acme\""
        );
        // Recording a booking of its own with that reference does not make it the partner's.
        assert!(matches!(
            reference_verdict(
                &acme,
                "trip_1",
                [rec("generic", Some("acme"), false), lite_attempt]
            ),
            Verdict::Foreign { .. }
        ));
        // Nor does it block liteAPI when its failure names its own checkout, which records it.
        assert_eq!(
            reference_verdict(
                &lite,
                "trip_1",
                [
                    rec("generic", Some("acme"), false),
                    rec("liteapi", None, true)
                ]
            ),
            Verdict::Own
        );
        // A named checkout of another owner vouches for nothing either (refused before anyway).
        assert!(matches!(
            reference_verdict(&acme, "trip_1", [rec("liteapi", None, true)]),
            Verdict::Foreign { .. }
        ));
    }

    /// The store reads one row per owner (`GROUP BY source, partner`, `named` as `MAX`), never
    /// every record nor a list cut at some length: the verdicts must depend only on which owners
    /// record a reference or payment (and whether the actor's named checkout is among them), not
    /// on how many records each owner has. 55 records of one owner and one of another, whole or
    /// grouped, give the same verdict.
    #[test]
    fn verdicts_depend_only_on_which_owners_record_it() {
        use proptest::prelude::*;
        let owners: [(&str, Option<&str>); 4] = [
            ("liteapi", None),
            ("generic", Some("acme")),
            ("generic", None),
            ("duffel", None),
        ];
        let actors = [
            Owner::new(Source::Liteapi, None),
            generic("acme"),
            generic(DEFAULT_PARTNER),
        ];
        let records = proptest::collection::vec((0..owners.len(), any::<bool>()), 0..120);
        proptest!(|(records in records, actor in 0..actors.len())| {
            let actor = &actors[actor];
            let whole: Vec<ReferenceRecord> = records
                .iter()
                .map(|&(o, named)| ReferenceRecord {
                    source: owners[o].0,
                    partner: owners[o].1,
                    named_checkout: named,
                })
                .collect();
            let mut grouped: Vec<ReferenceRecord> = Vec::new();
            for r in &whole {
                match grouped
                    .iter_mut()
                    .find(|g| (g.source, g.partner) == (r.source, r.partner))
                {
                    Some(g) => g.named_checkout |= r.named_checkout,
                    None => grouped.push(*r),
                }
            }
            prop_assert_eq!(
                reference_verdict(actor, "R", whole.iter().copied()),
                reference_verdict(actor, "R", grouped.iter().copied())
            );
            let pairs = |v: &[ReferenceRecord<'static>]| -> Vec<(&'static str, Option<&'static str>)> {
                v.iter().map(|r| (r.source, r.partner)).collect()
            };
            let (w, g) = (pairs(&whole), pairs(&grouped));
            prop_assert_eq!(
                payment_link(actor, w.iter().copied(), w.iter().copied()),
                payment_link(actor, g.iter().copied(), g.iter().copied())
            );
        });
        // The flood of the e2e test: 55 liteAPI checkouts and one acme booking of the reference.
        let lite = Owner::new(Source::Liteapi, None);
        let mut flood = vec![("liteapi", None); 55];
        flood.push(("generic", Some("acme")));
        assert_eq!(
            payment_link(&lite, flood.iter().copied(), []),
            PaymentLink::Foreign
        );
        assert_eq!(
            payment_link(&lite, [("liteapi", None), ("generic", Some("acme"))], []),
            PaymentLink::Foreign
        );
    }

    #[test]
    fn partners_do_not_share_event_ids() {
        let id = EventId::parse("msg_1").unwrap();
        let lite = Owner::new(Source::Liteapi, None);
        assert_eq!(scoped_event_id(&lite, &id).unwrap().as_str(), "msg_1");
        assert_eq!(
            scoped_event_id(&generic("default"), &id).unwrap().as_str(),
            "msg_1"
        );
        assert_eq!(
            scoped_event_id(&generic("acme"), &id).unwrap().as_str(),
            "acme/msg_1"
        );
        // The default partner cannot take acme's ids by sending them in acme's form.
        let mimic = EventId::parse("acme/msg_1").unwrap();
        assert_eq!(
            scoped_event_id(&generic("default"), &mimic)
                .unwrap()
                .as_str(),
            "default/acme/msg_1"
        );
        let long = EventId::parse(&"x".repeat(EventId::MAX_LEN)).unwrap();
        assert!(scoped_event_id(&generic("acme"), &long).is_err());
    }

    #[test]
    fn partner_secrets_parse_named_unnamed_and_rotated() {
        let parsed = parse_partner_secrets(
            "acme=whsec_QUFB, acme=whsec_QUFC whsec_REVG  globex=whsec_R0xP\nZGVm=",
        )
        .unwrap();
        let pairs: Vec<(&str, &str)> = parsed
            .iter()
            .map(|p| (p.partner.as_str(), p.secret.as_str()))
            .collect();
        assert_eq!(
            pairs,
            [
                ("acme", "whsec_QUFB"),
                ("acme", "whsec_QUFC"),
                ("default", "whsec_REVG"),
                ("globex", "whsec_R0xP"),
                ("default", "ZGVm="),
            ]
        );
        assert_eq!(parse_partner_secrets("").unwrap(), []);
        assert_eq!(
            parse_partner_secrets("Acme=whsec_QUFB"),
            Err(PartnerError::BadName("Acme".into()))
        );
        assert_eq!(
            parse_partner_secrets("a=whsec_QUFB b=whsec_QUFB"),
            Err(PartnerError::Shared("a".into(), "b".into()))
        );
        assert!(parse_partner_secrets("a=whsec_QUFB a=whsec_QUFB").is_ok());
        // The same key written without its prefix is the same key: the default partner cannot
        // hold acme's key.
        assert_eq!(
            parse_partner_secrets("acme=whsec_QUFB QUFB"),
            Err(PartnerError::Shared("acme".into(), "default".into()))
        );
        assert!(
            valid_partner_name("a-1_b")
                && !valid_partner_name("-a")
                && !valid_partner_name(&"a".repeat(33))
        );
    }
}
