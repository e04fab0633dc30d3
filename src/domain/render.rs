//! Rendering: canonical facts → subject, text and HTML of one email (askama templates in
//! `templates/`, checked at compile time, HTML-escaped), and a rendered email → RFC 5322 bytes for
//! SMTP (mail-builder: multipart/alternative, RFC 2047 encoded UTF-8 headers, our own Message-ID).

use crate::domain::action_token::OwnerAction;
use crate::domain::checkout::{classify_decline, decline_meaning, RiskReason};
use crate::domain::email::{DedupeKey, EmailKind, OutgoingEmail};
use crate::domain::event::{
    Airport, BookedRoom, BookingRef, Cancellation, CheckoutAttempt, EmailAddress, FlightBooking,
    FlightSegment, HotelBooking, Money, PersonName, Source,
};
use crate::domain::ids::message_id_for;
use askama::Template;
use chrono::{Datelike, NaiveDate, NaiveDateTime};

/// Errors while rendering; the journey step fails (and is retried) rather than send a broken email.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    #[error("template {template} failed: {source}")]
    Template {
        template: &'static str,
        #[source]
        source: askama::Error,
    },
    #[error("building the MIME message failed: {0}")]
    Mime(#[from] std::io::Error),
    /// The inputs would make an email that must not be sent (e.g. a customer email asked for the
    /// `dismiss` action, or a retry link that is not a public `http(s)` booking-site URL).
    #[error("refused to render: {0}")]
    Refused(String),
}

/// Sender identity and brand shown in every email.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Branding {
    /// Shown in bodies and as the From display name, e.g. `Example Trips`.
    pub brand: String,
    /// From address, e.g. `bookings@mail.example.com`.
    pub from: EmailAddress,
}

fn long_date(d: NaiveDate) -> String {
    d.format("%a %-d %B %Y").to_string()
}

fn money(m: &Option<Money>) -> Option<String> {
    m.as_ref().map(|m| format!("{} {}", m.amount, m.currency))
}

fn guest_list(b: &HotelBooking) -> String {
    let names: Vec<String> = if b.guests.is_empty() {
        vec![b.holder.name.full()]
    } else {
        b.guests.iter().map(|g| g.full()).collect()
    };
    names.join(", ")
}

/// The name a guest email greets with: the first name, or "there" when the supplier gave none.
fn greeting_name(first_name: &str) -> &str {
    let first = first_name.trim();
    if first.is_empty() {
        "there"
    } else {
        first
    }
}

/// A compact date range, e.g. `Fri 12 June – Mon 15 June 2026` (the year once when shared).
fn date_range(from: NaiveDate, to: NaiveDate) -> String {
    if from == to {
        long_date(from)
    } else if from.year() == to.year() {
        format!("{} – {}", from.format("%a %-d %B"), long_date(to))
    } else {
        format!("{} – {}", long_date(from), long_date(to))
    }
}

/// A local wall-clock time as guests read it: `Fri 12 June 2026, 07:15 (local time)`.
fn local_time(t: NaiveDateTime) -> String {
    t.format("%a %-d %B %Y, %H:%M (local time)").to_string()
}

/// An airport as a guest reads it: `London Heathrow (LHR)`.
fn airport_label(a: &Airport) -> String {
    let name = a.name.trim();
    if name.is_empty() {
        a.iata_code.clone()
    } else {
        format!("{name} ({})", a.iata_code)
    }
}

/// The city of an airport, else its name, else its IATA code.
fn airport_city(a: &Airport) -> &str {
    [a.city_name.as_deref(), Some(a.name.as_str())]
        .into_iter()
        .flatten()
        .map(str::trim)
        .find(|s| !s.is_empty())
        .unwrap_or(a.iata_code.as_str())
}

/// Where a trip goes: the last arrival, or, for a round trip (back where it started), the airport
/// of the longest stop between two segments.
fn trip_destination(segments: &[FlightSegment]) -> Option<&Airport> {
    let first = segments.first()?;
    let last = segments.last()?;
    if segments.len() < 2 || last.destination.iata_code != first.origin.iata_code {
        return Some(&last.destination);
    }
    segments
        .windows(2)
        .max_by_key(|w| w[1].departing_at - w[0].arriving_at)
        .map(|w| &w[0].destination)
}

/// Check-in instructions as plain text: suppliers often send HTML fragments (`<p>`, `<ul><li>`,
/// `<br>`, entities). Tags become line breaks or bullets, other tags go, a few entities are
/// decoded, blank runs collapse. The result is escaped again by the HTML templates.
pub fn plain_instructions(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut rest = raw;
    while let Some(lt) = rest.find('<') {
        out.push_str(&rest[..lt]);
        let after = &rest[lt + 1..];
        let is_tag = after
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '/' || c == '!');
        match after
            .find('>')
            .filter(|&gt| is_tag && !after[..gt].contains('<'))
        {
            Some(gt) => {
                let tag = after[..gt].trim_start_matches('/').to_ascii_lowercase();
                let name: String = tag
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric())
                    .collect();
                let closing = after.starts_with('/');
                match name.as_str() {
                    "li" if !closing => out.push_str("\n• "),
                    "li" => {}
                    "br" | "p" | "div" | "ul" | "ol" | "tr" | "h1" | "h2" | "h3" | "h4" | "h5"
                    | "h6" => out.push('\n'),
                    _ => {}
                }
                rest = &after[gt + 1..];
            }
            None => {
                out.push('<');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    let decoded = out
        .replace("&nbsp;", " ")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&apos;", "'")
        .replace("&amp;", "&");
    let mut lines: Vec<&str> = Vec::new();
    for line in decoded.lines().map(str::trim) {
        if line.is_empty() && lines.last().is_none_or(|l| l.is_empty()) {
            continue;
        }
        lines.push(line);
    }
    while lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    lines.join("\n")
}

fn instructions_of(b: &HotelBooking) -> Option<String> {
    b.checkin_instructions
        .as_deref()
        .map(plain_instructions)
        .filter(|s| !s.is_empty())
}

fn non_empty(s: Option<&str>) -> Option<&str> {
    s.map(str::trim).filter(|s| !s.is_empty())
}

/// The facts of one stay, shared by the hotel emails (`_stay_details.*`).
struct StayView<'a> {
    hotel_name: &'a str,
    booking_id: &'a str,
    hotel_confirmation_number: Option<&'a str>,
    checkin: String,
    checkout: String,
    nights: i64,
    rooms: &'a [BookedRoom],
    guests: String,
    total: Option<String>,
}

impl<'a> StayView<'a> {
    /// Every fact, the hotel confirmation number when known, no price.
    fn of(b: &'a HotelBooking) -> Self {
        Self {
            hotel_name: &b.hotel_name,
            booking_id: b.booking_id.as_str(),
            hotel_confirmation_number: non_empty(b.hotel_confirmation_number.as_deref()),
            checkin: long_date(b.checkin),
            checkout: long_date(b.checkout),
            nights: b.nights(),
            rooms: &b.rooms,
            guests: guest_list(b),
            total: None,
        }
    }

    fn with_total(self, b: &HotelBooking) -> Self {
        Self {
            total: money(&b.total),
            ..self
        }
    }

    fn without_confirmation_number(self) -> Self {
        Self {
            hotel_confirmation_number: None,
            ..self
        }
    }
}

/// Declares the HTML and text template of one email over one data struct (`$data<'a>`): two
/// wrapper structs that deref to the data, and `$data::$method` → `(html, text)`.
macro_rules! html_and_text {
    ($data:ident::$method:ident: $html:ident = $html_path:tt, $text:ident = $text_path:tt) => {
        #[derive(Template)]
        #[template(path = $html_path)]
        struct $html<'a, 'b>(&'b $data<'a>);

        #[derive(Template)]
        #[template(path = $text_path)]
        struct $text<'a, 'b>(&'b $data<'a>);

        impl<'a> std::ops::Deref for $html<'a, '_> {
            type Target = $data<'a>;
            fn deref(&self) -> &$data<'a> {
                self.0
            }
        }

        impl<'a> std::ops::Deref for $text<'a, '_> {
            type Target = $data<'a>;
            fn deref(&self) -> &$data<'a> {
                self.0
            }
        }

        impl $data<'_> {
            fn $method(&self) -> Result<(String, String), RenderError> {
                Ok((
                    render($html_path, &$html(self))?,
                    render($text_path, &$text(self))?,
                ))
            }
        }
    };
}

struct Confirmation<'a> {
    brand: &'a str,
    first_name: &'a str,
    stay: StayView<'a>,
    instructions: Option<String>,
}
html_and_text!(Confirmation::render_both: ConfirmationHtml = "booking_confirmation.html", ConfirmationText = "booking_confirmation.txt");

struct HotelNumber<'a> {
    brand: &'a str,
    first_name: &'a str,
    number: &'a str,
    stay: StayView<'a>,
}
html_and_text!(HotelNumber::render_both: HotelNumberHtml = "hotel_confirmation_number.html", HotelNumberText = "hotel_confirmation_number.txt");

struct ArrivalGuide<'a> {
    brand: &'a str,
    first_name: &'a str,
    stay: StayView<'a>,
    instructions: Option<String>,
}
html_and_text!(ArrivalGuide::render_both: ArrivalGuideHtml = "arrival_guide.html", ArrivalGuideText = "arrival_guide.txt");

struct CheckinDay<'a> {
    brand: &'a str,
    first_name: &'a str,
    hcn: Option<&'a str>,
    stay: StayView<'a>,
    instructions: Option<String>,
}
html_and_text!(CheckinDay::render_both: CheckinDayHtml = "checkin_day.html", CheckinDayText = "checkin_day.txt");

struct ThankYou<'a> {
    brand: &'a str,
    first_name: &'a str,
    hotel_name: &'a str,
}
html_and_text!(ThankYou::render_both: ThankYouHtml = "thank_you.html", ThankYouText = "thank_you.txt");

struct Cancelled<'a> {
    brand: &'a str,
    first_name: &'a str,
    to: &'a str,
    booking_id: &'a str,
    title: &'a str,
    with_charges: bool,
    /// `with_charges` without a fee amount: say a fee applies, name no number.
    charges_apply: bool,
    fee: Option<String>,
    refund: Option<String>,
}
html_and_text!(Cancelled::render_both: CancelledHtml = "booking_cancelled.html", CancelledText = "booking_cancelled.txt");

html_and_text!(Cancelled::render_owner: OwnerCancelledHtml = "owner_booking_cancelled.html", OwnerCancelledText = "owner_booking_cancelled.txt");

struct Updated<'a> {
    brand: &'a str,
    first_name: &'a str,
    changes: &'a [(String, String, String)],
    stay: StayView<'a>,
    instructions: Option<String>,
}
html_and_text!(Updated::render_both: UpdatedHtml = "booking_updated.html", UpdatedText = "booking_updated.txt");

struct FlightView<'a> {
    brand: &'a str,
    first_name: &'a str,
    booking_id: &'a str,
    pnr: Option<&'a str>,
    passengers: Vec<String>,
    total: Option<String>,
    origin: &'a str,
    destination: &'a str,
    segments: &'a [SegmentView],
    before: &'a [SegmentView],
    after: &'a [SegmentView],
}
html_and_text!(FlightView::render_confirmation: FlightConfirmationHtml = "flight_confirmation.html", FlightConfirmationText = "flight_confirmation.txt");

html_and_text!(FlightView::render_changed: FlightChangedHtml = "flight_changed.html", FlightChangedText = "flight_changed.txt");

/// One flight segment as a guest reads it. Times are preformatted in the local time of the airport
/// concerned (departure at the origin, arrival at the destination).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegmentView {
    /// E.g. `ZZ 0472`.
    pub flight_number: String,
    /// E.g. `London Heathrow (LHR)`.
    pub from: String,
    /// E.g. `Fri 12 June 2026, 07:15 (local time)`.
    pub departs: String,
    /// E.g. `Barcelona El Prat (BCN)`.
    pub to: String,
    /// E.g. `Fri 12 June 2026, 10:30 (local time)`.
    pub arrives: String,
}

impl SegmentView {
    /// The view of a canonical segment, whose times are already local at each airport.
    pub fn from_segment(s: &FlightSegment) -> Self {
        Self {
            flight_number: s.flight_number.clone(),
            from: airport_label(&s.origin),
            departs: local_time(s.departing_at),
            to: airport_label(&s.destination),
            arrives: local_time(s.arriving_at),
        }
    }

    /// [`SegmentView::from_segment`] of every segment, in order.
    pub fn list(segments: &[FlightSegment]) -> Vec<Self> {
        segments.iter().map(Self::from_segment).collect()
    }
}

/// What a cancellation email says about the cancelled booking, hotel or flight.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CancelledBooking {
    pub booking_id: BookingRef,
    pub to: EmailAddress,
    pub first_name: String,
    /// E.g. `Example Harbour Hotel, Fri 12 June – Mon 15 June 2026` or
    /// `London (LHR) → Barcelona (BCN), Fri 12 June 2026`.
    pub title: String,
}

impl CancelledBooking {
    /// A hotel booking: title `<hotel>, <check-in> – <check-out>`.
    pub fn for_hotel(b: &HotelBooking) -> Self {
        Self {
            booking_id: b.booking_id.clone(),
            to: b.holder.email.clone(),
            first_name: b.holder.name.first_name.trim().to_string(),
            title: format!("{}, {}", b.hotel_name, date_range(b.checkin, b.checkout)),
        }
    }

    /// A flight order: title `<city> (<IATA>) → <city> (<IATA>), <first departure date>` (a date
    /// range when the trip's last flight leaves on another day).
    pub fn for_flight(f: &FlightBooking) -> Self {
        let title = match (
            f.segments.first(),
            f.segments.last(),
            trip_destination(&f.segments),
        ) {
            (Some(first), Some(last), Some(dest)) => {
                let from = &first.origin;
                let start = first.departing_at.date();
                let end = last.departing_at.date();
                format!(
                    "{} ({}) → {} ({}), {}",
                    airport_city(from),
                    from.iata_code,
                    airport_city(dest),
                    dest.iata_code,
                    date_range(start, end)
                )
            }
            _ => format!("Flight booking {}", f.booking_id),
        };
        Self {
            booking_id: f.booking_id.clone(),
            to: f.contact.email.clone(),
            first_name: f.contact.name.first_name.trim().to_string(),
            title,
        }
    }
}

/// Fills in what every rendered email carries the same way.
fn outgoing(
    kind: EmailKind,
    dedupe_key: DedupeKey,
    booking_id: &BookingRef,
    to: &EmailAddress,
    subject: String,
    (html, text): (String, String),
    branding: &Branding,
) -> OutgoingEmail {
    OutgoingEmail {
        message_id: message_id_for(dedupe_key.as_str(), branding.from.domain()),
        headers: Vec::new(),
        dedupe_key,
        kind,
        audience: kind.audience(),
        rank: kind.rank(),
        booking_id: Some(booking_id.to_string()),
        to: to.clone(),
        subject,
        text,
        html,
    }
}

#[derive(Template)]
#[template(path = "owner_new_booking.html")]
struct OwnerNewBookingHtml<'a> {
    brand: &'a str,
    sandbox: bool,
    booking_id: &'a str,
    guest_name: String,
    guest_email: &'a str,
    guest_phone: Option<&'a str>,
    hotel_name: &'a str,
    checkin: String,
    checkout: String,
    nights: i64,
    total: Option<String>,
    source: &'a str,
    event_id: &'a str,
}

#[derive(Template)]
#[template(path = "owner_new_booking.txt")]
struct OwnerNewBookingText<'a> {
    sandbox: bool,
    booking_id: &'a str,
    guest_name: String,
    guest_email: &'a str,
    guest_phone: Option<&'a str>,
    hotel_name: &'a str,
    checkin: String,
    checkout: String,
    nights: i64,
    total: Option<String>,
    source: &'a str,
    event_id: &'a str,
}

fn render<T: Template>(name: &'static str, t: &T) -> Result<String, RenderError> {
    t.render().map_err(|source| RenderError::Template {
        template: name,
        source,
    })
}

/// The guest's booking confirmation (kind `booking_confirmation`, rank booking). Carries the
/// hotel confirmation number and the check-in instructions when they are already known (a late
/// booking's arrival guide is merged into it).
pub fn booking_confirmation(
    b: &HotelBooking,
    branding: &Branding,
) -> Result<OutgoingEmail, RenderError> {
    let kind = EmailKind::BookingConfirmation;
    let parts = Confirmation {
        brand: &branding.brand,
        first_name: greeting_name(&b.holder.name.first_name),
        stay: StayView::of(b).with_total(b),
        instructions: instructions_of(b),
    }
    .render_both()?;
    Ok(outgoing(
        kind,
        DedupeKey::for_booking(kind, &b.booking_id),
        &b.booking_id,
        &b.holder.email,
        format!("Your stay at {} is confirmed", b.hotel_name),
        parts,
        branding,
    ))
}

/// The hotel's own confirmation number (kind `hotel_confirmation_number`, rank booking), key
/// `hotel_confirmation_number:<booking id>:<number>`: a corrected number is a new email.
pub fn hotel_confirmation_number(
    b: &HotelBooking,
    number: &str,
    branding: &Branding,
) -> Result<OutgoingEmail, RenderError> {
    let kind = EmailKind::HotelConfirmationNumber;
    let number = number.trim();
    let parts = HotelNumber {
        brand: &branding.brand,
        first_name: greeting_name(&b.holder.name.first_name),
        number,
        stay: StayView::of(b).without_confirmation_number(),
    }
    .render_both()?;
    Ok(outgoing(
        kind,
        DedupeKey::for_booking_part(kind, &b.booking_id, number),
        &b.booking_id,
        &b.holder.email,
        format!("Your hotel confirmation number for {}", b.hotel_name),
        parts,
        branding,
    ))
}

/// The arrival guide, three days before check-in (kind `arrival_guide`, rank service), key
/// `arrival_guide:<booking id>:<check-in YYYY-MM-DD>`: a moved stay gets a new guide.
pub fn arrival_guide(b: &HotelBooking, branding: &Branding) -> Result<OutgoingEmail, RenderError> {
    let kind = EmailKind::ArrivalGuide;
    let parts = ArrivalGuide {
        brand: &branding.brand,
        first_name: greeting_name(&b.holder.name.first_name),
        stay: StayView::of(b),
        instructions: instructions_of(b),
    }
    .render_both()?;
    Ok(outgoing(
        kind,
        DedupeKey::for_booking_part(kind, &b.booking_id, &b.checkin.to_string()),
        &b.booking_id,
        &b.holder.email,
        format!("Your stay at {} starts in 3 days", b.hotel_name),
        parts,
        branding,
    ))
}

/// The check-in day email (kind `checkin_day`, rank urgent), key
/// `checkin_day:<booking id>:<check-in YYYY-MM-DD>`.
pub fn checkin_day(b: &HotelBooking, branding: &Branding) -> Result<OutgoingEmail, RenderError> {
    let kind = EmailKind::CheckinDay;
    let parts = CheckinDay {
        brand: &branding.brand,
        first_name: greeting_name(&b.holder.name.first_name),
        hcn: non_empty(b.hotel_confirmation_number.as_deref()),
        stay: StayView::of(b).without_confirmation_number(),
        instructions: instructions_of(b),
    }
    .render_both()?;
    Ok(outgoing(
        kind,
        DedupeKey::for_booking_part(kind, &b.booking_id, &b.checkin.to_string()),
        &b.booking_id,
        &b.holder.email,
        format!("Today: check-in at {}", b.hotel_name),
        parts,
        branding,
    ))
}

/// The thank-you after check-out (kind `thank_you`, rank service), key `thank_you:<booking id>`.
/// Short, warm, no marketing and no links.
pub fn thank_you(b: &HotelBooking, branding: &Branding) -> Result<OutgoingEmail, RenderError> {
    let kind = EmailKind::ThankYou;
    let parts = ThankYou {
        brand: &branding.brand,
        first_name: greeting_name(&b.holder.name.first_name),
        hotel_name: &b.hotel_name,
    }
    .render_both()?;
    Ok(outgoing(
        kind,
        DedupeKey::for_booking(kind, &b.booking_id),
        &b.booking_id,
        &b.holder.email,
        format!("Thank you for staying at {}", b.hotel_name),
        parts,
        branding,
    ))
}

fn cancelled_view<'a>(
    c: &'a CancelledBooking,
    cancellation: &Cancellation,
    branding: &'a Branding,
) -> Cancelled<'a> {
    let fee = money(&cancellation.cancellation_fee);
    Cancelled {
        brand: &branding.brand,
        first_name: greeting_name(&c.first_name),
        to: c.to.as_str(),
        booking_id: c.booking_id.as_str(),
        title: &c.title,
        with_charges: cancellation.with_charges,
        charges_apply: cancellation.with_charges && fee.is_none(),
        fee,
        refund: money(&cancellation.refund),
    }
}

/// The guest's cancellation (kind `booking_cancelled`, rank booking), key
/// `booking_cancelled:<booking id>`. Money facts appear only when the cancellation carries them:
/// no refund is ever mentioned unless `cancellation.refund` is given.
pub fn booking_cancelled(
    c: &CancelledBooking,
    cancellation: &Cancellation,
    branding: &Branding,
) -> Result<OutgoingEmail, RenderError> {
    let kind = EmailKind::BookingCancelled;
    let parts = cancelled_view(c, cancellation, branding).render_both()?;
    Ok(outgoing(
        kind,
        DedupeKey::for_booking(kind, &c.booking_id),
        &c.booking_id,
        &c.to,
        format!("Your booking {} is cancelled", c.booking_id),
        parts,
        branding,
    ))
}

/// The owner's "booking cancelled" alert (kind `owner_booking_cancelled`, sent at once), key
/// `owner_booking_cancelled:<booking id>`.
pub fn owner_booking_cancelled(
    c: &CancelledBooking,
    cancellation: &Cancellation,
    owner: &EmailAddress,
    branding: &Branding,
) -> Result<OutgoingEmail, RenderError> {
    let kind = EmailKind::OwnerBookingCancelled;
    let view = cancelled_view(c, cancellation, branding);
    let parts = view.render_owner()?;
    Ok(outgoing(
        kind,
        DedupeKey::for_booking(kind, &c.booking_id),
        &c.booking_id,
        owner,
        format!("Booking cancelled: {} · {}", c.booking_id, c.title),
        parts,
        branding,
    ))
}

/// The guest's "booking updated" (kind `booking_updated`, rank booking), key
/// `booking_updated:<booking id>:<first 16 characters of snapshot_hash>`: one email per distinct
/// state. `changes` are `(label, before, after)` rows; the current details follow them.
pub fn booking_updated(
    b: &HotelBooking,
    snapshot_hash: &str,
    changes: &[(String, String, String)],
    branding: &Branding,
) -> Result<OutgoingEmail, RenderError> {
    let kind = EmailKind::BookingUpdated;
    let parts = Updated {
        brand: &branding.brand,
        first_name: greeting_name(&b.holder.name.first_name),
        changes,
        stay: StayView::of(b).with_total(b),
        instructions: instructions_of(b),
    }
    .render_both()?;
    let hash: String = snapshot_hash.trim().chars().take(16).collect();
    Ok(outgoing(
        kind,
        DedupeKey::for_booking_part(kind, &b.booking_id, &hash),
        &b.booking_id,
        &b.holder.email,
        format!("Your booking at {} was updated", b.hotel_name),
        parts,
        branding,
    ))
}

fn flight_view<'a>(
    f: &'a FlightBooking,
    segments: &'a [SegmentView],
    before: &'a [SegmentView],
    after: &'a [SegmentView],
    branding: &'a Branding,
) -> FlightView<'a> {
    let passengers: Vec<String> = f
        .passengers
        .iter()
        .map(PersonName::full)
        .filter(|n| !n.is_empty())
        .collect();
    let passengers = if passengers.is_empty() {
        vec![f.contact.name.full()]
    } else {
        passengers
    };
    FlightView {
        brand: &branding.brand,
        first_name: greeting_name(&f.contact.name.first_name),
        booking_id: f.booking_id.as_str(),
        pnr: non_empty(f.booking_reference.as_deref()),
        passengers,
        total: money(&f.total),
        origin: f.segments.first().map_or("", |s| airport_city(&s.origin)),
        destination: trip_destination(&f.segments).map_or("", airport_city),
        segments,
        before,
        after,
    }
}

/// The flight confirmation (kind `flight_confirmation`, rank booking), key
/// `flight_confirmation:<order id>`. `segments` carry each time in its airport's local time (see
/// [`SegmentView::from_segment`]).
pub fn flight_confirmation(
    f: &FlightBooking,
    segments: &[SegmentView],
    branding: &Branding,
) -> Result<OutgoingEmail, RenderError> {
    let kind = EmailKind::FlightConfirmation;
    let view = flight_view(f, segments, &[], &[], branding);
    let subject = if view.origin.is_empty() || view.destination.is_empty() {
        "Your flight is confirmed".to_string()
    } else {
        format!(
            "Your flight {} → {} is confirmed",
            view.origin, view.destination
        )
    };
    let parts = view.render_confirmation()?;
    Ok(outgoing(
        kind,
        DedupeKey::for_booking(kind, &f.booking_id),
        &f.booking_id,
        &f.contact.email,
        subject,
        parts,
        branding,
    ))
}

/// The airline's schedule change (kind `flight_changed`, rank urgent), key
/// `flight_changed:<order id>:<change id>`: the segments before and after, and what to do.
pub fn flight_changed(
    f: &FlightBooking,
    change_id: &str,
    before: &[SegmentView],
    after: &[SegmentView],
    branding: &Branding,
) -> Result<OutgoingEmail, RenderError> {
    let kind = EmailKind::FlightChanged;
    let view = flight_view(f, &[], before, after, branding);
    let parts = view.render_changed()?;
    Ok(outgoing(
        kind,
        DedupeKey::for_booking_part(kind, &f.booking_id, change_id),
        &f.booking_id,
        &f.contact.email,
        "Important: your flight schedule changed".to_string(),
        parts,
        branding,
    ))
}

/// The owner's "new booking" alert (kind `owner_new_booking`, sent at once).
pub fn owner_new_booking(
    b: &HotelBooking,
    source: Source,
    event_id: &str,
    owner: &EmailAddress,
    branding: &Branding,
) -> Result<OutgoingEmail, RenderError> {
    let kind = EmailKind::OwnerNewBooking;
    let html = render(
        "owner_new_booking.html",
        &OwnerNewBookingHtml {
            brand: &branding.brand,
            sandbox: b.sandbox,
            booking_id: b.booking_id.as_str(),
            guest_name: b.holder.name.full(),
            guest_email: b.holder.email.as_str(),
            guest_phone: b.holder.phone.as_deref(),
            hotel_name: &b.hotel_name,
            checkin: long_date(b.checkin),
            checkout: long_date(b.checkout),
            nights: b.nights(),
            total: money(&b.total),
            source: source.as_str(),
            event_id,
        },
    )?;
    let text = render(
        "owner_new_booking.txt",
        &OwnerNewBookingText {
            sandbox: b.sandbox,
            booking_id: b.booking_id.as_str(),
            guest_name: b.holder.name.full(),
            guest_email: b.holder.email.as_str(),
            guest_phone: b.holder.phone.as_deref(),
            hotel_name: &b.hotel_name,
            checkin: long_date(b.checkin),
            checkout: long_date(b.checkout),
            nights: b.nights(),
            total: money(&b.total),
            source: source.as_str(),
            event_id,
        },
    )?;
    let dedupe_key = DedupeKey::for_booking(kind, &b.booking_id);
    let sandbox = if b.sandbox { " [sandbox]" } else { "" };
    Ok(OutgoingEmail {
        message_id: message_id_for(dedupe_key.as_str(), branding.from.domain()),
        headers: Vec::new(),
        dedupe_key,
        kind,
        audience: kind.audience(),
        rank: kind.rank(),
        booking_id: Some(b.booking_id.to_string()),
        to: owner.clone(),
        subject: format!(
            "New booking{sandbox}: {} · {} · {}",
            b.hotel_name,
            b.holder.name.full(),
            b.checkin
        ),
        text,
        html,
    })
}

#[derive(Template)]
#[template(path = "owner_email_failed.html")]
struct OwnerEmailFailedHtml<'a> {
    brand: &'a str,
    outcome: &'a str,
    kind: &'a str,
    dedupe_key: &'a str,
    to: &'a str,
    subject: &'a str,
    attempts: i64,
    reason: &'a str,
}

#[derive(Template)]
#[template(path = "owner_email_failed.txt")]
struct OwnerEmailFailedText<'a> {
    outcome: &'a str,
    kind: &'a str,
    dedupe_key: &'a str,
    to: &'a str,
    subject: &'a str,
    attempts: i64,
    reason: &'a str,
}

/// The owner's alert that a client email was dropped (`outcome = "dropped"`) or became a dead
/// letter (`"dead"`). Its dedupe key is derived from the failed email's key, so one alert per email.
pub fn owner_email_failed(
    failed: &OutgoingEmail,
    outcome: &str,
    attempts: i64,
    reason: &str,
    owner: &EmailAddress,
    branding: &Branding,
) -> Result<OutgoingEmail, RenderError> {
    let kind = EmailKind::OwnerEmailFailed;
    let html = render(
        "owner_email_failed.html",
        &OwnerEmailFailedHtml {
            brand: &branding.brand,
            outcome,
            kind: failed.kind.as_str(),
            dedupe_key: failed.dedupe_key.as_str(),
            to: failed.to.as_str(),
            subject: &failed.subject,
            attempts,
            reason,
        },
    )?;
    let text = render(
        "owner_email_failed.txt",
        &OwnerEmailFailedText {
            outcome,
            kind: failed.kind.as_str(),
            dedupe_key: failed.dedupe_key.as_str(),
            to: failed.to.as_str(),
            subject: &failed.subject,
            attempts,
            reason,
        },
    )?;
    let dedupe_key = DedupeKey::new(kind, failed.dedupe_key.as_str());
    Ok(OutgoingEmail {
        message_id: message_id_for(dedupe_key.as_str(), branding.from.domain()),
        headers: Vec::new(),
        dedupe_key,
        kind,
        audience: kind.audience(),
        rank: kind.rank(),
        booking_id: failed.booking_id.clone(),
        to: owner.clone(),
        subject: format!("Email {outcome}: {}", failed.subject),
        text,
        html,
    })
}

#[derive(Template)]
#[template(path = "owner_provider_paused.html")]
struct OwnerProviderPausedHtml<'a> {
    brand: &'a str,
    provider: &'a str,
    until: String,
    reason: &'a str,
    smtp_or_main_left: bool,
    other: &'a str,
    credentials: bool,
}

#[derive(Template)]
#[template(path = "owner_provider_paused.txt")]
struct OwnerProviderPausedText<'a> {
    provider: &'a str,
    until: String,
    reason: &'a str,
    smtp_or_main_left: bool,
    other: &'a str,
    credentials: bool,
}

/// What an owner alert about a paused provider says.
#[derive(Debug, Clone)]
pub struct ProviderPaused<'a> {
    /// Stored provider name, e.g. `smtp`, `resend`, `cloudflare_email`.
    pub provider: &'a str,
    /// Paused until then, ms UTC.
    pub until_ms: i64,
    /// The provider's own words, e.g. `535 5.7.8 authentication failed`.
    pub reason: &'a str,
    /// The provider that carries email meanwhile, if any.
    pub fallback: Option<&'a str>,
    /// `true` when the credentials were refused (else: quota/plan/account).
    pub credentials: bool,
    /// Sent at, ms UTC: one alert per provider per UTC day (dedupe key
    /// `owner_provider_paused:<provider>:<YYYY-MM-DD>`).
    pub now_ms: i64,
}

/// The owner's alert that a provider is paused (refused credentials, exhausted plan): the outbox
/// cannot fix it, the owner can.
pub fn owner_provider_paused(
    p: &ProviderPaused<'_>,
    owner: &EmailAddress,
    branding: &Branding,
) -> Result<OutgoingEmail, RenderError> {
    let kind = EmailKind::OwnerProviderPaused;
    let until = chrono::DateTime::from_timestamp_millis(p.until_ms)
        .map(|t| t.format("%Y-%m-%d %H:%M").to_string())
        .unwrap_or_else(|| p.until_ms.to_string());
    let other = p.fallback.unwrap_or("");
    let html = render(
        "owner_provider_paused.html",
        &OwnerProviderPausedHtml {
            brand: &branding.brand,
            provider: p.provider,
            until: until.clone(),
            reason: p.reason,
            smtp_or_main_left: p.fallback.is_some(),
            other,
            credentials: p.credentials,
        },
    )?;
    let text = render(
        "owner_provider_paused.txt",
        &OwnerProviderPausedText {
            provider: p.provider,
            until,
            reason: p.reason,
            smtp_or_main_left: p.fallback.is_some(),
            other,
            credentials: p.credentials,
        },
    )?;
    let day = crate::domain::marketing::utc_day(p.now_ms);
    let dedupe_key = DedupeKey::new(kind, &format!("{}:{day}", p.provider));
    Ok(OutgoingEmail {
        message_id: message_id_for(dedupe_key.as_str(), branding.from.domain()),
        headers: Vec::new(),
        dedupe_key,
        kind,
        audience: kind.audience(),
        rank: kind.rank(),
        booking_id: None,
        to: owner.clone(),
        subject: format!("Email provider paused: {}", p.provider),
        text,
        html,
    })
}

// ---------------------------------------------------------------------------------------------
// Unfinished checkouts (domain::checkout): the customer's follow-up, the decline emails the owner
// sends with one click, the owner's hold alert, and the one-click pages. Customer emails take a
// retry URL (the booking site) and never an action link; owner links only go to the owner.

/// What a checkout email calls the trip: `<hotel>, <dates>`, or whichever part is known.
fn checkout_trip(a: &CheckoutAttempt) -> Option<String> {
    let hotel = non_empty(a.hotel_name.as_deref());
    let dates = checkout_dates(a);
    match (hotel, dates) {
        (Some(h), Some(d)) => Some(format!("{h}, {d}")),
        (Some(h), None) => Some(h.to_string()),
        (None, Some(d)) => Some(format!("your stay, {d}")),
        (None, None) => None,
    }
}

fn checkout_dates(a: &CheckoutAttempt) -> Option<String> {
    match (a.checkin, a.checkout) {
        (Some(i), Some(o)) => Some(date_range(i, o)),
        (Some(i), None) => Some(format!("from {}", long_date(i))),
        _ => None,
    }
}

/// The customer's first name on a checkout, or "there".
fn checkout_first_name(a: &CheckoutAttempt) -> &str {
    greeting_name(a.guest_name.as_ref().map_or("", |n| n.first_name.as_str()))
}

/// A retry link must be a public booking-site URL: `http(s)://`, no whitespace or quotes, and
/// never an admin or one-click action path (the seed's "internal links in customer emails" bug).
fn check_retry_url(url: &str) -> Result<&str, RenderError> {
    let url = url.trim();
    let lower = url.to_ascii_lowercase();
    let scheme_ok = lower.starts_with("https://") || lower.starts_with("http://");
    let clean = !url
        .chars()
        .any(|c| c.is_whitespace() || c.is_control() || matches!(c, '"' | '\'' | '<' | '>'));
    let internal = ["/admin", "/actions/", "/action/"]
        .iter()
        .any(|p| lower.contains(p));
    if scheme_ok && clean && !internal {
        Ok(url)
    } else {
        Err(RenderError::Refused(format!(
            "retry URL {url:?} is not a public booking-site link"
        )))
    }
}

/// Fills in a checkout email (no booking exists, so `booking_id` is `None`).
fn unbooked(
    kind: EmailKind,
    dedupe_key: DedupeKey,
    to: &EmailAddress,
    subject: String,
    (html, text): (String, String),
    branding: &Branding,
) -> OutgoingEmail {
    OutgoingEmail {
        message_id: message_id_for(dedupe_key.as_str(), branding.from.domain()),
        headers: Vec::new(),
        dedupe_key,
        kind,
        audience: kind.audience(),
        rank: kind.rank(),
        booking_id: None,
        to: to.clone(),
        subject,
        text,
        html,
    }
}

struct CheckoutFollowUp<'a> {
    brand: &'a str,
    first_name: &'a str,
    trip: Option<String>,
    retry_url: &'a str,
    title: &'a str,
    /// `checkout_declined` only: the reason is insufficient funds (else a security check).
    funds: bool,
}
html_and_text!(CheckoutFollowUp::render_not_completed: CheckoutNotCompletedHtml = "checkout_not_completed.html", CheckoutNotCompletedText = "checkout_not_completed.txt");

html_and_text!(CheckoutFollowUp::render_declined: CheckoutDeclinedHtml = "checkout_declined.html", CheckoutDeclinedText = "checkout_declined.txt");

/// The customer's follow-up 20 minutes after an unpaid checkout (kind `checkout_not_completed`,
/// rank service), key `checkout_not_completed:<prebook id>`.
///
/// "Your booking wasn't completed — nothing was charged": it never claims a decline (we cannot see
/// one), explains the two common reasons a card payment fails — not enough funds or credit, and
/// the card issuer's or payment processor's security check — with how to fix each, and links to
/// `retry_url` (the booking site; refused when it is not a public `http(s)` URL or points at an
/// admin/action path). Hotel and dates appear when the attempt carries them.
pub fn checkout_not_completed(
    a: &CheckoutAttempt,
    to: &EmailAddress,
    retry_url: &str,
    branding: &Branding,
) -> Result<OutgoingEmail, RenderError> {
    let kind = EmailKind::CheckoutNotCompleted;
    let title = "Your booking wasn\u{2019}t completed \u{2014} nothing was charged";
    let parts = CheckoutFollowUp {
        brand: &branding.brand,
        first_name: checkout_first_name(a),
        trip: checkout_trip(a),
        retry_url: check_retry_url(retry_url)?,
        title,
        funds: false,
    }
    .render_not_completed()?;
    Ok(unbooked(
        kind,
        DedupeKey::new(kind, a.prebook_id.trim()),
        to,
        title.to_string(),
        parts,
        branding,
    ))
}

/// The customer's email the owner sends with one click on a card-testing hold, naming one reason:
/// `reason` = [`OwnerAction::SendInsufficientFunds`] → kind `checkout_declined_funds`,
/// [`OwnerAction::SendSecurityCheck`] → kind `checkout_declined_security` (both rank service);
/// [`OwnerAction::Dismiss`] is refused. Both kinds share the key
/// `checkout_declined:<prebook id>` ([`DedupeKey::for_checkout_decline`]; a hold is about one
/// attempt), so the customer gets one decline email per hold whichever the owner picks.
pub fn checkout_declined(
    a: &CheckoutAttempt,
    to: &EmailAddress,
    reason: OwnerAction,
    retry_url: &str,
    branding: &Branding,
) -> Result<OutgoingEmail, RenderError> {
    let (kind, funds, title) = match reason {
        OwnerAction::SendInsufficientFunds => (
            EmailKind::CheckoutDeclinedFunds,
            true,
            "Your payment didn\u{2019}t go through: not enough funds or credit",
        ),
        OwnerAction::SendSecurityCheck => (
            EmailKind::CheckoutDeclinedSecurity,
            false,
            "Your payment was stopped by a security check",
        ),
        OwnerAction::Dismiss => {
            return Err(RenderError::Refused(
                "the dismiss action sends no customer email".into(),
            ))
        }
    };
    let parts = CheckoutFollowUp {
        brand: &branding.brand,
        first_name: checkout_first_name(a),
        trip: checkout_trip(a),
        retry_url: check_retry_url(retry_url)?,
        title,
        funds,
    }
    .render_declined()?;
    Ok(unbooked(
        kind,
        DedupeKey::for_checkout_decline(&a.prebook_id),
        to,
        title.to_string(),
        parts,
        branding,
    ))
}

/// One Stripe decline code as the owner reads it.
struct DeclineView {
    code: String,
    meaning: &'static str,
    suggestion: Option<&'static str>,
}

/// One one-click action link in the owner's alert.
struct LinkView<'a> {
    label: &'static str,
    url: &'a str,
    dismiss: bool,
}

#[derive(Template)]
#[template(path = "owner_checkout_hold.html")]
struct OwnerHoldHtml<'a, 'b>(&'b OwnerHold<'a>);

#[derive(Template)]
#[template(path = "owner_checkout_hold.txt")]
struct OwnerHoldText<'a, 'b>(&'b OwnerHold<'a>);

impl<'a> std::ops::Deref for OwnerHoldHtml<'a, '_> {
    type Target = OwnerHold<'a>;
    fn deref(&self) -> &OwnerHold<'a> {
        self.0
    }
}

impl<'a> std::ops::Deref for OwnerHoldText<'a, '_> {
    type Target = OwnerHold<'a>;
    fn deref(&self) -> &OwnerHold<'a> {
        self.0
    }
}

struct OwnerHold<'a> {
    brand: &'a str,
    hold_id: &'a str,
    risk_words: String,
    email: Option<&'a str>,
    name: Option<String>,
    /// `Names used with this email today` or `Emails used with this name today`.
    seen_label: &'static str,
    seen: &'a [String],
    hotel: Option<String>,
    dates: Option<String>,
    price: Option<String>,
    prebook_id: &'a str,
    transaction_id: Option<&'a str>,
    client_reference: Option<&'a str>,
    declines: Vec<DeclineView>,
    links: Vec<LinkView<'a>>,
}

/// The owner's alert that a checkout is held as possible card testing (kind
/// `owner_checkout_hold`, owner, rank urgent), key `owner_checkout_hold:<hold id>`.
///
/// Shows the facts — the attempt's email and name, the names (or emails) seen with it today, the
/// risk in plain words, the distinct Stripe decline codes seen with what each means and which
/// action it points to, hotel and dates — and one button per `links` entry (the signed one-click
/// URLs, in the order given). Owner only: the links act on the hold.
pub fn owner_checkout_hold(
    hold_id: &str,
    a: &CheckoutAttempt,
    risk: &RiskReason,
    decline_codes: &[String],
    links: &[(OwnerAction, String)],
    owner: &EmailAddress,
    branding: &Branding,
) -> Result<OutgoingEmail, RenderError> {
    let kind = EmailKind::OwnerCheckoutHold;
    let (seen_label, seen, subject_who) = match risk {
        RiskReason::EmailUnderNames { email, names } => {
            ("Names used with this email today", names, email.as_str())
        }
        RiskReason::NameWithEmails { name, emails } => {
            ("Emails used with this name today", emails, name.as_str())
        }
    };
    let mut codes: Vec<String> = Vec::new();
    for code in decline_codes
        .iter()
        .map(|c| c.trim())
        .filter(|c| !c.is_empty())
    {
        if !codes.iter().any(|c| c == code) {
            codes.push(code.to_string());
        }
    }
    let declines = codes
        .into_iter()
        .map(|code| DeclineView {
            meaning: decline_meaning(&code),
            suggestion: classify_decline(&code)
                .suggested_action()
                .map(OwnerAction::label),
            code,
        })
        .collect();
    let hotel = non_empty(a.hotel_name.as_deref())
        .or(non_empty(a.hotel_id.as_deref()))
        .map(str::to_string);
    let view = OwnerHold {
        brand: &branding.brand,
        hold_id,
        risk_words: risk.plain_words(),
        email: a.email.as_ref().map(EmailAddress::as_str),
        name: a
            .guest_name
            .as_ref()
            .map(PersonName::full)
            .filter(|n| !n.is_empty()),
        seen_label,
        seen,
        hotel,
        dates: checkout_dates(a),
        price: money(&a.price),
        prebook_id: &a.prebook_id,
        transaction_id: non_empty(a.transaction_id.as_deref()),
        client_reference: non_empty(a.client_reference.as_deref()),
        declines,
        links: links
            .iter()
            .map(|(action, url)| LinkView {
                label: action.label(),
                url: url.as_str(),
                dismiss: !action.sends_email(),
            })
            .collect(),
    };
    let html = render("owner_checkout_hold.html", &OwnerHoldHtml(&view))?;
    let text = render("owner_checkout_hold.txt", &OwnerHoldText(&view))?;
    Ok(unbooked(
        kind,
        DedupeKey::new(kind, hold_id.trim()),
        owner,
        format!("Checkout held (possible card testing): {subject_who}"),
        (html, text),
        branding,
    ))
}

#[derive(Template)]
#[template(path = "action_confirm.html")]
struct ActionConfirmPage<'a> {
    label: &'static str,
    effect: String,
    hold_id: &'a str,
    reason: &'a str,
    email: Option<&'a str>,
    name: Option<String>,
    hotel: Option<String>,
    dates: Option<String>,
    price: Option<String>,
    prebook_id: &'a str,
    post_url: &'a str,
}

#[derive(Template)]
#[template(path = "action_result.html")]
struct ActionResultPage<'a> {
    title: &'a str,
    message: &'a str,
}

/// Minimal HTML escaping for the fallback page (askama escapes the templates themselves).
fn escape_html(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// A bare page for the (unreachable in practice) case that a page template fails to render.
pub(crate) fn fallback_page(title: &str, message: &str) -> String {
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{t}</title></head>\
         <body><h1>{t}</h1><p>{m}</p></body></html>",
        t = escape_html(title),
        m = escape_html(message)
    )
}

/// The page a one-click link opens (`GET`): the hold's facts and **one** `POST` form to
/// `post_url` whose button performs `action`. Opening it changes nothing (mail scanners pre-fetch
/// links). `reason` is the hold's risk in plain words; `email` the customer's address as stored.
/// Every value is HTML-escaped.
pub fn action_confirm_page(
    hold_id: &str,
    reason: &str,
    a: &CheckoutAttempt,
    email: Option<&str>,
    action: OwnerAction,
    post_url: &str,
) -> String {
    let email = non_empty(email).or(a.email.as_ref().map(EmailAddress::as_str));
    let effect = match (action, email) {
        (OwnerAction::SendInsufficientFunds, Some(to)) => format!(
            "The customer at {to} gets one email saying the payment didn\u{2019}t go through for lack of funds or credit, with how to fix it and a link to try again. The hold closes."
        ),
        (OwnerAction::SendSecurityCheck, Some(to)) => format!(
            "The customer at {to} gets one email saying the payment was stopped by a security check, with how to fix it and a link to try again. The hold closes."
        ),
        (OwnerAction::SendInsufficientFunds | OwnerAction::SendSecurityCheck, None) => {
            "This checkout has no customer email address: nothing can be sent. The hold closes."
                .to_string()
        }
        (OwnerAction::Dismiss, _) => {
            "The hold closes and nothing is sent to the customer.".to_string()
        }
    };
    let page = ActionConfirmPage {
        label: action.label(),
        effect,
        hold_id,
        reason,
        email,
        name: a
            .guest_name
            .as_ref()
            .map(PersonName::full)
            .filter(|n| !n.is_empty()),
        hotel: non_empty(a.hotel_name.as_deref())
            .or(non_empty(a.hotel_id.as_deref()))
            .map(str::to_string),
        dates: checkout_dates(a),
        price: money(&a.price),
        prebook_id: &a.prebook_id,
        post_url,
    };
    page.render()
        .unwrap_or_else(|e| fallback_page("Confirm this action", &e.to_string()))
}

/// A one-click outcome page: done, already used, expired, invalid, already handled. `title` and
/// `message` are HTML-escaped.
pub fn action_result_page(title: &str, message: &str) -> String {
    ActionResultPage { title, message }
        .render()
        .unwrap_or_else(|_| fallback_page(title, message))
}

/// Builds the RFC 5322 message for SMTP: multipart/alternative (text + HTML), encoded UTF-8
/// headers, the email's own deterministic Message-ID, `Date` from `date_unix_s` (UTC seconds).
pub fn to_mime(
    email: &OutgoingEmail,
    branding: &Branding,
    date_unix_s: i64,
) -> Result<Vec<u8>, RenderError> {
    let message_id = email
        .message_id
        .trim_start_matches('<')
        .trim_end_matches('>')
        .to_string();
    let bytes = mail_builder::MessageBuilder::new()
        .from((branding.brand.as_str(), branding.from.as_str()))
        .to(email.to.as_str())
        .subject(email.subject.as_str())
        .message_id(message_id)
        .date(date_unix_s)
        .text_body(email.text.as_str())
        .html_body(email.html.as_str())
        .write_to_vec()?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::event::{BookingRef, Holder, PersonName};

    pub(crate) fn sample_booking() -> HotelBooking {
        HotelBooking {
            booking_id: BookingRef::parse("BK_1").unwrap(),
            client_reference: None,
            prebook_id: None,
            status: "CONFIRMED".into(),
            hotel_id: Some("lp_1".into()),
            hotel_name: "Hôtel <Harbour> & Spa".into(),
            checkin: NaiveDate::from_ymd_opt(2026, 6, 12).unwrap(),
            checkout: NaiveDate::from_ymd_opt(2026, 6, 15).unwrap(),
            rooms: vec![BookedRoom {
                room_name: "Standard Double".into(),
                board_name: Some("Room Only".into()),
                adults: 2,
                children: 0,
            }],
            holder: Holder {
                name: PersonName {
                    first_name: "Zoë".into(),
                    last_name: "Guest".into(),
                },
                email: EmailAddress::parse("guest@example.com").unwrap(),
                phone: None,
            },
            guests: vec![],
            total: Some(Money {
                amount: "540".into(),
                currency: "EUR".into(),
            }),
            hotel_confirmation_number: None,
            sandbox: false,
            location: None,
            checkin_instructions: None,
            replaces: None,
        }
    }

    fn branding() -> Branding {
        Branding {
            brand: "Example Trips".into(),
            from: EmailAddress::parse("bookings@mail.example.com").unwrap(),
        }
    }

    #[test]
    fn confirmation_has_the_facts_and_escapes_html() {
        let e = booking_confirmation(&sample_booking(), &branding()).unwrap();
        assert_eq!(e.dedupe_key.as_str(), "booking_confirmation:BK_1");
        assert_eq!(e.to.as_str(), "guest@example.com");
        for needle in [
            "BK_1",
            "Fri 12 June 2026",
            "Mon 15 June 2026",
            "3 nights",
            "540 EUR",
            "Standard Double",
            "Zoë Guest",
        ] {
            assert!(e.text.contains(needle), "text lacks {needle}: {}", e.text);
            assert!(e.html.contains(needle), "html lacks {needle}");
        }
        assert!(
            e.html.contains("Hôtel &#60;Harbour&#62; &#38; Spa")
                || e.html.contains("Hôtel &lt;Harbour&gt; &amp; Spa"),
            "{}",
            e.html
        );
        assert!(e.text.contains("Hôtel <Harbour> & Spa"));
        assert!(!e.text.contains("{{") && !e.html.contains("{%"));
    }

    #[test]
    fn owner_alert_goes_to_the_owner_and_names_the_guest() {
        let owner = EmailAddress::parse("owner@example.com").unwrap();
        let e = owner_new_booking(
            &sample_booking(),
            Source::Liteapi,
            "evt_1",
            &owner,
            &branding(),
        )
        .unwrap();
        assert_eq!(e.to, owner);
        assert_eq!(e.dedupe_key.as_str(), "owner_new_booking:BK_1");
        assert!(e.text.contains("guest@example.com") && e.text.contains("evt_1"));
    }

    #[test]
    fn mime_is_multipart_alternative_with_encoded_subject_and_our_message_id() {
        let e = booking_confirmation(&sample_booking(), &branding()).unwrap();
        let raw = String::from_utf8(to_mime(&e, &branding(), 1_767_225_600).unwrap()).unwrap();
        assert!(raw.contains("multipart/alternative"), "{raw}");
        assert!(
            raw.contains(&format!("Message-ID: {}", e.message_id)),
            "{raw}"
        );
        assert!(
            raw.contains("Subject: =?utf-8?"),
            "non-ASCII subject must be RFC 2047 encoded: {raw}"
        );
        assert!(
            raw.contains("Date: Thu, 1 Jan 2026 00:00:00 +0000"),
            "{raw}"
        );
        assert!(raw.contains("text/plain") && raw.contains("text/html"));
    }
}
