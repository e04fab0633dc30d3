//! Real-shaped messages (`tests/fixtures/inbound/*.eml`, modelled on what Gmail, Outlook, Apple
//! Mail, Exchange's out-of-office and Gmail's delivery reports send) read by [`super::read`].

use super::*;

fn fixture(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/tests/fixtures/inbound/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn read_fixture(name: &str, envelope_from: &str) -> Inbound {
    let raw = fixture(name);
    read(&raw, envelope_from, raw.len() as u64)
}

#[test]
fn a_gmail_reply_keeps_the_guest_s_words_and_the_facts_around_them() {
    let m = read_fixture("gmail-reply.eml", "ana.garcia@gmail.com");
    assert_eq!(
        m.text,
        "Hola! Can we check in early, around 11:00? We land at 8.\n\nGracias,\nAna"
    );
    assert!(m.quoted_removed);
    assert_eq!(m.from, "ana.garcia@gmail.com");
    assert_eq!(m.from_name, "Ana García");
    assert_eq!(m.subject, "Re: Your stay at Hôtel Harbour is confirmed");
    assert_eq!(m.date_ms, Some(1_796_464_933_000));
    assert_eq!(
        m.message_id.as_deref(),
        Some("CAF3xYz+r8=Qm1w@mail.gmail.com")
    );
    assert_eq!(
        m.in_reply_to,
        ["booking_confirmation.bk-1@mail.example.com"]
    );
    assert_eq!(m.auto, None);
    let verdicts: Vec<(&str, &str)> = m
        .auth
        .iter()
        .map(|v| (v.method.as_str(), v.result.as_str()))
        .collect();
    assert_eq!(
        verdicts,
        [
            ("dkim", "pass"),
            ("spf", "pass"),
            ("dmarc", "pass"),
            ("arc", "none")
        ]
    );
    assert!(m.attachments.is_empty() && m.note.is_none());
}

#[test]
fn an_outlook_reply_in_latin_1_lists_its_attachment() {
    let m = read_fixture("outlook-reply.eml", "jan.devries@outlook.com");
    assert!(
        m.text.starts_with("We will arrive after midnight"),
        "{}",
        m.text
    );
    assert!(
        m.text.ends_with("Met vriendelijke groet, Jan"),
        "{}",
        m.text
    );
    assert!(!m.text.contains("Hôtel"), "history kept: {}", m.text);
    assert_eq!(
        m.attachments,
        [Attachment {
            name: "boarding pass.pdf".into(),
            content_type: "application/pdf".into(),
            size: 12,
        }]
    );
}

#[test]
fn an_apple_mail_reply_in_french_is_cut_at_its_attribution() {
    let m = read_fixture("apple-mail-reply.eml", "sophie.martin@icloud.com");
    assert_eq!(
        m.text,
        "Bonjour, pourriez-vous ajouter un lit bébé ?\nMerci !\nSophie"
    );
    assert_eq!(m.subject, "Re: Votre séjour est confirmé");
}

#[test]
fn out_of_office_and_delivery_reports_are_machines() {
    let ooo = read_fixture("out-of-office.eml", "jan.devries@outlook.com");
    assert_eq!(ooo.auto, Some(AutoKind::AutoReply));
    assert!(ooo.text.contains("out of the office"));
    let dsn = read_fixture("delivery-report.eml", "");
    assert_eq!(dsn.auto, Some(AutoKind::DeliveryReport));
    assert!(dsn.text.starts_with("Address not found."), "{}", dsn.text);
    // Its report parts are listed like attachments, bounded.
    assert!(dsn.attachments.len() <= ATTACHMENTS_MAX);
}

#[test]
fn a_malformed_message_is_kept_as_far_as_it_reads() {
    let m = read_fixture("malformed.eml", "guest@example.com");
    assert_eq!(m.subject, "broken");
    assert!(m.text.contains("Hello, we will be late."), "{:?}", m.text);
    assert_eq!(m.auto, None);
    // A text part whose base64 does not decode is kept as it came, not dropped.
    let broken = read(
        b"From: g@example.com\r\nSubject: b\r\nContent-Type: text/plain\r\nContent-Transfer-Encoding: base64\r\n\r\nSGVsbG8=!!!%%%\r\n",
        "g@example.com",
        90,
    );
    assert!(broken.text.contains("SGVsbG8=!!!%%%"), "{:?}", broken.text);
    let junk = read(
        b"\x00\x01\xff no headers at all \x1b[31m",
        "x@example.com",
        30,
    );
    assert!(junk
        .note
        .as_deref()
        .unwrap()
        .contains("not readable as MIME"));
    assert!(junk.text.contains("no headers at all"));
    assert!(!junk.text.contains('\u{1b}'));
    let empty = read(b"", "", 0);
    assert!(empty.text.is_empty());
    assert_eq!(empty.auto, Some(AutoKind::DeliveryReport));
}

#[test]
fn a_ten_mib_message_read_in_part_keeps_the_text_and_says_what_was_not_read() {
    let mut raw = String::from(
        "From: Guest <guest@example.com>\r\nTo: reply+t@reply.example.com\r\nSubject: photos\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nHere are the photos of the damaged suitcase.\r\n--b\r\nContent-Type: image/jpeg; name=one.jpg\r\nContent-Transfer-Encoding: base64\r\n\r\n",
    );
    while raw.len() < 10 * 1024 * 1024 {
        raw.push_str(&"QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo=".repeat(2));
        raw.push_str("\r\n");
    }
    raw.push_str("--b\r\nContent-Type: image/jpeg; name=two.jpg\r\n\r\nxx\r\n--b--\r\n");
    let limit = InboundLimits::DEFAULT.read_max_bytes as usize;
    let m = read(
        &raw.as_bytes()[..limit],
        "guest@example.com",
        raw.len() as u64,
    );
    assert_eq!(m.text, "Here are the photos of the damaged suitcase.");
    assert!(m
        .note
        .as_deref()
        .unwrap()
        .contains(&format!("only the first {limit} of")));
    assert_eq!(m.attachments.len(), 1);
    assert_eq!(m.attachments[0].name, "one.jpg");
    // Read whole, both are listed.
    let whole = read(raw.as_bytes(), "guest@example.com", raw.len() as u64);
    assert_eq!(whole.attachments.len(), 2);
    assert!(whole.note.is_none());
}

#[test]
fn text_is_bounded_and_attachments_are_counted_past_their_maximum() {
    let mut raw = String::from(
        "From: g@example.com\r\nSubject: long\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\n",
    );
    raw.push_str(&"word ".repeat(4_000));
    raw.push_str("\r\n");
    for i in 0..25 {
        raw.push_str(&format!(
            "--b\r\nContent-Type: text/csv; name=\"f{i}.csv\"\r\nContent-Disposition: attachment\r\n\r\na,b\r\n"
        ));
    }
    raw.push_str("--b--\r\n");
    let m = read(raw.as_bytes(), "g@example.com", raw.len() as u64);
    assert_eq!(m.text.chars().count(), TEXT_MAX_CHARS);
    assert!(m.text.ends_with('…'));
    assert_eq!(m.attachments.len(), ATTACHMENTS_MAX);
    assert_eq!(m.attachments_more, 5);
    assert!(m.note.as_deref().unwrap().contains("cut at 8000"));
}

#[test]
fn header_values_are_one_line_and_bounded() {
    let raw = format!(
        "From: \"Evil\r\n Name\" <g@example.com>\r\nSubject: {}\r\nMessage-ID: <{}@x>\r\n\r\nhi\r\n",
        "s".repeat(500),
        "i".repeat(2000)
    );
    let m = read(raw.as_bytes(), "g@example.com", raw.len() as u64);
    assert!(!m.from_name.contains('\n') && !m.from_name.contains('\r'));
    assert!(m.subject.chars().count() <= 200);
    assert!(m.message_id.unwrap().chars().count() <= MESSAGE_ID_MAX);
}

#[test]
fn filing_follows_the_token_and_the_bounds() {
    let guest = read_fixture("gmail-reply.eml", "ana.garcia@gmail.com");
    let ooo = read_fixture("out-of-office.eml", "jan.devries@outlook.com");
    let l = InboundLimits::DEFAULT;
    let none = Counts::default();
    // The guest's own reply, its token matched, filed with these counts.
    let guest_reply = |counts| file(Ok(()), &guest, counts, l);
    assert_eq!(guest_reply(none), Filing::Guest { alert: true });
    let busy = Counts {
        alerted_today: l.alerts_per_booking_per_day,
        ..none
    };
    assert_eq!(guest_reply(busy), Filing::Guest { alert: false });
    assert_eq!(
        file(Ok(()), &ooo, none, l),
        Filing::Auto(AutoKind::AutoReply)
    );
    let full = Counts {
        on_booking: l.max_per_booking,
        ..none
    };
    assert!(matches!(guest_reply(full), Filing::Refuse(r) if r.contains("maximum of 200")));
    // Another sender's share is smaller and its own: full, it refuses them, not the guest.
    let others_full = Counts {
        share: SenderShare::Other,
        on_booking: l.max_per_booking_others,
        ..none
    };
    assert!(
        matches!(guest_reply(others_full), Filing::Refuse(r) if r.contains("maximum of 50 messages from senders other than the guest"))
    );
    let others_room = Counts {
        on_booking: l.max_per_booking_others - 1,
        ..others_full
    };
    assert_eq!(guest_reply(others_room), Filing::Guest { alert: true });
    let guest_room = Counts {
        on_booking: l.max_per_booking_others,
        ..none
    };
    assert_eq!(guest_reply(guest_room), Filing::Guest { alert: true });
    let bad = || Err(Unmatched::Token("the reply token expired".into()));
    assert_eq!(
        file(bad(), &guest, none, l),
        Filing::Unmatched(Unmatched::Token("the reply token expired".into()))
    );
    let flood = Counts {
        unmatched_today: l.unmatched_per_day,
        ..none
    };
    assert!(matches!(file(bad(), &guest, flood, l), Filing::Refuse(r) if r.contains("expired")));
}

#[test]
fn only_the_topmost_authentication_results_of_the_receiving_system_is_read() {
    let verdicts = |values: &[&str], id: &str| -> Vec<String> {
        trusted_verdicts(values.iter().copied(), id)
            .into_iter()
            .map(|v| format!("{}={}", v.method, v.result))
            .collect()
    };
    let cf = "mx.cloudflare.net";
    // Email Routing's own header above a forged one: Email Routing's verdicts.
    assert_eq!(
        verdicts(
            &[
                "mx.cloudflare.net;\r\n\tdkim=fail header.d=gmail.com;\r\n\tdmarc=fail header.from=gmail.com",
                "mx.cloudflare.net; dkim=pass; dmarc=pass",
            ],
            cf
        ),
        ["dkim=fail", "dmarc=fail"]
    );
    // A sender's header under another id, above or alone, is never read.
    assert_eq!(
        verdicts(
            &[
                "evil.example; dkim=pass; spf=pass; dmarc=pass",
                "MX.Cloudflare.NET 1; spf=softfail (mx.cloudflare.net: not permitted) smtp.mailfrom=x@y.z",
            ],
            cf
        ),
        ["spf=softfail"]
    );
    for forged in [
        "mx.cloudflare.net.evil.example; dkim=pass",
        "evil.example (mx.cloudflare.net); dkim=pass",
        "(mx.cloudflare.net) evil.example; dkim=pass",
        "mx-cloudflare.net; dkim=pass",
    ] {
        assert_eq!(verdicts(&[forged], cf), Vec::<String>::new(), "{forged}");
    }
    assert_eq!(verdicts(&[], cf), Vec::<String>::new());
    // Another receiving system, by configuration.
    assert_eq!(
        verdicts(
            &["mx.cloudflare.net; dkim=pass", "mx.example.net; dkim=fail"],
            "mx.example.net"
        ),
        ["dkim=fail"]
    );
}

#[test]
fn a_reply_read_through_another_receiving_system_trusts_its_id_only() {
    let raw = fixture("gmail-reply.eml");
    let other = read_trusting(
        &raw,
        "ana.garcia@gmail.com",
        raw.len() as u64,
        "mx.example.net",
    );
    assert!(other.auth.is_empty(), "{:?}", other.auth);
    let cf = read_trusting(
        &raw,
        "ana.garcia@gmail.com",
        raw.len() as u64,
        CLOUDFLARE_AUTHSERV_ID,
    );
    assert_eq!(cf.auth.len(), 4);
}

fn read_str(raw: &str, envelope_from: &str) -> Inbound {
    read(raw.as_bytes(), envelope_from, raw.len() as u64)
}

#[test]
fn a_german_gmail_reply_is_cut_at_its_attribution_naming_the_address() {
    let raw = "Authentication-Results: mx.cloudflare.net; dkim=pass header.d=gmail.com; spf=pass smtp.mailfrom=anna.schmidt@gmail.com; dmarc=pass header.from=gmail.com\r\n\
MIME-Version: 1.0\r\n\
From: Anna Schmidt <anna.schmidt@gmail.com>\r\n\
Date: Tue, 3 Mar 2026 10:12:00 +0100\r\n\
Message-ID: <CAB7x=Q1w@mail.gmail.com>\r\n\
Subject: Re: Ihr Aufenthalt im Hotel Hafen ist bestätigt\r\n\
To: Example Trips <reply+abc@reply.example.com>\r\n\
Content-Type: multipart/alternative; boundary=\"000000000000a1b2\"\r\n\
\r\n\
--000000000000a1b2\r\n\
Content-Type: text/plain; charset=\"UTF-8\"\r\n\
Content-Transfer-Encoding: quoted-printable\r\n\
\r\n\
K=C3=B6nnen wir schon um 11 Uhr einchecken?\r\n\
\r\n\
Am Di., 3. M=C3=A4rz 2026 um 10:00 Uhr schrieb Example Trips <\r\n\
reply+abc@reply.example.com>:\r\n\
\r\n\
> Ihr Aufenthalt ist best=C3=A4tigt.\r\n\
>\r\n\
\r\n\
--000000000000a1b2\r\n\
Content-Type: text/html; charset=\"UTF-8\"\r\n\
\r\n\
<div dir=\"ltr\">K&ouml;nnen wir schon um 11 Uhr einchecken?</div><div class=\"gmail_quote\">Am Di. schrieb</div>\r\n\
--000000000000a1b2--\r\n";
    let m = read_str(raw, "anna.schmidt@gmail.com");
    assert_eq!(m.text, "Können wir schon um 11 Uhr einchecken?");
    assert!(m.quoted_removed && m.auto.is_none());
}

#[test]
fn an_html_only_gmail_reply_is_cut_at_gmail_quote() {
    // Gmail in Polish: an attribution no text rule knows; the quote element is cut whatever the
    // language.
    let raw = "From: Ana Garcia <ana.garcia@gmail.com>\r\n\
To: reply+abc@reply.example.com\r\n\
Subject: Re: Your stay is confirmed\r\n\
Message-ID: <CAH=only-html@mail.gmail.com>\r\n\
MIME-Version: 1.0\r\n\
Content-Type: text/html; charset=\"UTF-8\"\r\n\
Content-Transfer-Encoding: quoted-printable\r\n\
\r\n\
<div dir=3D\"ltr\">We arrive after midnight, is the desk open?<div><br></div><=\r\n\
div>Ana</div></div><br><div class=3D\"gmail_quote gmail_quote_container\"><di=\r\n\
v dir=3D\"ltr\" class=3D\"gmail_attr\">W dniu sob., 5 gru 2026 o 10:00 =\r\n\
Example Trips &lt;<a href=3D\"mailto:reply+abc@reply.example.com\">reply+abc@re=\r\n\
ply.example.com</a>&gt; napisa=C5=82(a):<br></div><blockquote class=3D\"gmail_quote\" s=\r\n\
tyle=3D\"margin:0px 0px 0px 0.8ex\">Your stay is confirmed. Check-in from 15:0=\r\n\
0.</blockquote></div>\r\n";
    let m = read_str(raw, "ana.garcia@gmail.com");
    assert!(m.quoted_removed);
    assert!(
        m.text
            .starts_with("We arrive after midnight, is the desk open?"),
        "{:?}",
        m.text
    );
    assert!(m.text.contains("Ana"), "{:?}", m.text);
    assert!(
        !m.text.contains("napisał") && !m.text.contains("Check-in"),
        "{:?}",
        m.text
    );
}

#[test]
fn outlook_header_blocks_in_italian_spanish_and_french_are_cut() {
    let cases = [
        (
            "Da: Example Trips <bookings@example.com>\r\nInviato: sabato 5 dicembre 2026 10:00\r\nA: Giulia Rossi <giulia@example.it>\r\nOggetto: Il tuo soggiorno =C3=A8 confermato",
            "C'è un parcheggio?",
            "C'=C3=A8 un parcheggio?",
        ),
        (
            "________________________________\r\nDe: Example Trips <bookings@example.com>\r\nEnviado: s=C3=A1bado, 5 de diciembre de 2026 10:00\r\nPara: Ana <ana@example.es>\r\nAsunto: Su estancia est=C3=A1 confirmada",
            "¿Hay cuna para el bebé?",
            "=C2=BFHay cuna para el beb=C3=A9?",
        ),
        (
            "De=C2=A0: Example Trips <bookings@example.com>\r\nEnvoy=C3=A9=C2=A0: samedi 5 d=C3=A9cembre 2026 10:00\r\n=C3=80=C2=A0: Julie <julie@example.fr>\r\nObjet=C2=A0: Votre s=C3=A9jour est confirm=C3=A9",
            "Pouvons-nous arriver à 22 h ?",
            "Pouvons-nous arriver =C3=A0 22 h ?",
        ),
    ];
    for (block, want, written) in cases {
        let raw = format!(
            "From: Guest <guest@outlook.com>\r\nTo: reply+abc@reply.example.com\r\nSubject: RE: booking\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=\"utf-8\"\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n{written}\r\n\r\n{block}\r\n\r\nYour stay is confirmed.\r\n"
        );
        let m = read_str(&raw, "guest@outlook.com");
        assert_eq!(m.text, want, "{block}");
        assert!(m.quoted_removed);
    }
}

#[test]
fn out_of_office_answers_in_each_form_are_automatic() {
    let message = |headers: &str, subject: &str| {
        format!(
            "From: Jan de Vries <jan@example.nl>\r\nTo: reply+abc@reply.example.com\r\nSubject: {subject}\r\n{headers}MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nIk ben afwezig tot 10 maart.\r\n"
        )
    };
    let cases = [
        // Exchange, German: both headers and the subject.
        (
            "Auto-Submitted: auto-generated\r\nX-Auto-Response-Suppress: All\r\n",
            "Abwesenheitsnotiz: Ihr Aufenthalt ist bestätigt",
        ),
        (
            "X-Auto-Response-Suppress: DR, OOF, AutoReply\r\n",
            "Re: booking",
        ),
        ("Precedence: auto_reply\r\n", "Re: booking"),
        ("X-Autogenerated: Reply\r\n", "Re: booking"),
        ("X-Autoreply: yes\r\n", "Re: booking"),
        // No header at all, only the subject (RFC 2047 encoded as clients send it).
        (
            "",
            "=?utf-8?q?R=C3=A9ponse_automatique_=3A_Votre_s=C3=A9jour?=",
        ),
        ("", "Automatic reply: Your stay is confirmed"),
        ("", "Out of Office: Your stay is confirmed"),
        ("", "Risposta automatica: Il tuo soggiorno"),
        ("", "=?iso-8859-1?q?Respuesta_autom=E1tica=3A_Su_estancia?="),
    ];
    for (headers, subject) in cases {
        let m = read_str(&message(headers, subject), "jan@example.nl");
        assert_eq!(m.auto, Some(AutoKind::AutoReply), "{headers:?} {subject:?}");
        assert_eq!(
            file(Ok(()), &m, Counts::default(), InboundLimits::DEFAULT),
            Filing::Auto(AutoKind::AutoReply),
            "kept, never alerted"
        );
    }
    let person = read_str(
        &message("X-Auto-Response-Suppress: RN, NRN\r\n", "Re: booking"),
        "jan@example.nl",
    );
    assert_eq!(person.auto, None);
}
