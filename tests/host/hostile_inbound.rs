//! Hostile review of guests' replies (`src/domain/inbound/`): mail forged to look like the guest.
//!
//! A holder of one reply address (a guest's forwarded confirmation is enough) writes to the
//! booking with `From:` the guest's address (gmail.com publishes DMARC `p=none`, so Email Routing's
//! DMARC enforcement lets it through) and adds an `Authentication-Results` header of its own. The
//! engine shows the verdicts of the topmost such header without looking at its authserv-id, so
//! whenever the receiving side added none above it (RFC 8601 §5 leaves removal to the receiver,
//! and nothing in Email Routing's documentation says a Worker's copy carries its own), the owner
//! reads "dkim pass, spf pass, dmarc pass" under a message the guest never wrote. RFC 8601 §7.1:
//! results from an authserv-id the consumer does not trust must be ignored.

use booking_email_engine::domain::inbound::read;

const FORGED: &str = "Authentication-Results: mx.cloudflare.net.evil.example; dkim=pass header.d=gmail.com; spf=pass smtp.mailfrom=ana.garcia@gmail.com; dmarc=pass header.from=gmail.com\r\n\
From: Ana Garcia <ana.garcia@gmail.com>\r\n\
To: reply+TOKEN@reply.example.com\r\n\
Subject: Re: Your stay is confirmed\r\n\
Message-ID: <forged-1@evil.example>\r\n\
Date: Sat, 5 Dec 2026 11:02:13 +0100\r\n\
Content-Type: text/plain; charset=utf-8\r\n\
\r\n\
Please send the refund to my new card instead, details below.\r\n";

#[test]
fn verdicts_of_an_authentication_results_header_from_an_untrusted_authserv_id_are_not_shown() {
    let m = read(
        FORGED.as_bytes(),
        "bounce@evil.example",
        FORGED.len() as u64,
    );
    let shown: Vec<(String, String)> = m
        .auth
        .iter()
        .map(|v| (v.method.clone(), v.result.clone()))
        .collect();
    assert!(
        shown.is_empty(),
        "the sender's own header is shown to the owner as the check of the message: {shown:?}"
    );
}
