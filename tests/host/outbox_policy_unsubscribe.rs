//! RFC 8058 one-click unsubscribe: signed tokens, the exact headers, the POST body check.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use booking_email_engine::domain::marketing::unsubscribe::{
    headers, is_https, is_one_click_body, sign, url, verify, UnsubscribeClaims, UnsubscribeError,
    ONE_CLICK, TOKEN_MAX,
};
use proptest::prelude::*;

const KEY: &[u8] = b"test-unsubscribe-key-0123456789abcdef";
const OTHER_KEY: &[u8] = b"another-unsubscribe-key-0123456789abc";

fn claims(email: &str, list: &str) -> UnsubscribeClaims {
    UnsubscribeClaims {
        email: email.into(),
        list: list.into(),
    }
}

#[test]
fn round_trip() {
    let t = sign("guest@example.com", "marketing", KEY);
    assert_eq!(
        verify(&t, KEY),
        Ok(claims("guest@example.com", "marketing"))
    );
    // Deterministic (payload of one email never changes between attempts), no expiry inside.
    assert_eq!(t, sign("guest@example.com", "marketing", KEY));
    assert_ne!(t, sign("guest@example.com", "newsletter", KEY));
    assert_ne!(t, sign("Guest@example.com", "marketing", KEY));
    // Surrounding whitespace (a copied link) is tolerated.
    assert_eq!(
        verify(&format!(" {t}\n"), KEY),
        Ok(claims("guest@example.com", "marketing"))
    );
}

#[test]
fn tokens_are_url_safe_and_opaque() {
    let t = sign("a+b/c=d?@example.com", "marketing & more", KEY);
    assert!(
        t.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.'),
        "{t}"
    );
    assert!(
        !t.contains("example.com"),
        "the address is not in clear text"
    );
    assert_eq!(t.matches('.').count(), 1);
    assert_eq!(
        verify(&t, KEY),
        Ok(claims("a+b/c=d?@example.com", "marketing & more"))
    );
}

#[test]
fn separators_cannot_be_smuggled_between_email_and_list() {
    let a = sign("x@example.com\nlist", "m", KEY);
    let b = sign("x@example.com", "list\nm", KEY);
    assert_ne!(a, b);
    assert_eq!(verify(&a, KEY), Ok(claims("x@example.com\nlist", "m")));
    assert_eq!(verify(&b, KEY), Ok(claims("x@example.com", "list\nm")));
}

#[test]
fn tampering_is_a_bad_signature() {
    let t = sign("guest@example.com", "marketing", KEY);
    let (payload, tag) = t.split_once('.').unwrap();
    // Another payload with the original tag.
    let forged_payload = URL_SAFE_NO_PAD.encode(br#"["victim@example.com","marketing"]"#);
    assert_eq!(
        verify(&format!("{forged_payload}.{tag}"), KEY),
        Err(UnsubscribeError::BadSignature)
    );
    // Every single-character change of the tag.
    for i in 0..tag.len() {
        let mut chars: Vec<char> = tag.chars().collect();
        chars[i] = if chars[i] == 'A' { 'B' } else { 'A' };
        let changed: String = chars.into_iter().collect();
        let r = verify(&format!("{payload}.{changed}"), KEY);
        assert!(
            matches!(
                r,
                Err(UnsubscribeError::BadSignature) | Err(UnsubscribeError::Malformed)
            ),
            "{i}: {r:?}"
        );
    }
    // Flipping one payload character.
    let mut p: Vec<char> = payload.chars().collect();
    p[3] = if p[3] == 'x' { 'y' } else { 'x' };
    let p: String = p.into_iter().collect();
    assert!(verify(&format!("{p}.{tag}"), KEY).is_err());
}

#[test]
fn another_key_is_a_bad_signature() {
    let t = sign("guest@example.com", "marketing", KEY);
    assert_eq!(verify(&t, OTHER_KEY), Err(UnsubscribeError::BadSignature));
    assert_eq!(verify(&t, b""), Err(UnsubscribeError::BadSignature));
    let other = sign("guest@example.com", "marketing", OTHER_KEY);
    assert_ne!(t, other);
    assert_eq!(verify(&other, KEY), Err(UnsubscribeError::BadSignature));
}

#[test]
fn malformed_tokens() {
    let good = sign("guest@example.com", "marketing", KEY);
    let (payload, tag) = good.split_once('.').unwrap();
    // A correctly signed payload that is not our JSON shape.
    let signed_other = |raw: &[u8]| {
        // Only reachable by whoever has the key: prove the shape check anyway.
        let p = URL_SAFE_NO_PAD.encode(raw);
        use hmac::{Hmac, Mac};
        let mut m = Hmac::<sha2::Sha256>::new_from_slice(KEY).unwrap();
        m.update(b"booking-email-engine/unsubscribe/v1\n");
        m.update(p.as_bytes());
        format!("{p}.{}", URL_SAFE_NO_PAD.encode(m.finalize().into_bytes()))
    };
    assert_eq!(
        verify(&signed_other(br#"["only-one"]"#), KEY),
        Err(UnsubscribeError::Malformed)
    );
    assert_eq!(
        verify(&signed_other(br#"["", "marketing"]"#), KEY),
        Err(UnsubscribeError::Malformed)
    );
    assert_eq!(
        verify(&signed_other(b"not json"), KEY),
        Err(UnsubscribeError::Malformed)
    );
    // …and the helper really does sign like `sign`.
    assert_eq!(
        verify(&signed_other(br#"["a@example.com","m"]"#), KEY),
        Ok(claims("a@example.com", "m"))
    );
    for bad in [
        String::new(),
        "   ".into(),
        "no-dot-at-all".into(),
        format!("{payload}."),
        format!(".{tag}"),
        format!("{payload}.{tag}.extra"),
        format!("{payload}.{}", &tag[..20]),
        format!("{payload}.{tag}AAAA"),
        format!("{payload}!.{tag}"),
        format!("{payload}.{tag}="),
        format!("{}.{tag}", "A".repeat(TOKEN_MAX)),
    ] {
        assert_eq!(verify(&bad, KEY), Err(UnsubscribeError::Malformed), "{bad}");
    }
}

#[test]
fn header_exact_strings() {
    let t = sign("guest@example.com", "marketing", KEY);
    let h = headers("https://engine.example.com", &t);
    assert_eq!(
        h,
        [
            (
                "List-Unsubscribe".to_string(),
                format!("<https://engine.example.com/unsubscribe/{t}>")
            ),
            (
                "List-Unsubscribe-Post".to_string(),
                "List-Unsubscribe=One-Click".to_string()
            ),
        ]
    );
    assert_eq!(ONE_CLICK, "List-Unsubscribe=One-Click");
    for (base, list_unsubscribe) in [
        // A trailing slash or a path on the base.
        (
            "https://engine.example.com/",
            "<https://engine.example.com/unsubscribe/T>",
        ),
        (
            "https://example.com/engine/",
            "<https://example.com/engine/unsubscribe/T>",
        ),
        // https only: an http (or scheme-less) base is upgraded, never emitted.
        (
            "http://localhost:8787",
            "<https://localhost:8787/unsubscribe/T>",
        ),
        (
            "engine.example.com",
            "<https://engine.example.com/unsubscribe/T>",
        ),
    ] {
        assert_eq!(headers(base, "T")[0].1, list_unsubscribe, "{base}");
    }
    assert_eq!(
        url("HTTPS://engine.example.com", "T"),
        "https://engine.example.com/unsubscribe/T"
    );
    // The URL's last segment verifies.
    let u = url("https://engine.example.com", &t);
    let last = u.rsplit('/').next().unwrap();
    assert_eq!(
        verify(last, KEY),
        Ok(claims("guest@example.com", "marketing"))
    );
}

#[test]
fn https_check_for_configuration() {
    assert!(is_https("https://engine.example.com"));
    assert!(is_https("HTTPS://engine.example.com/x"));
    for bad in [
        "http://engine.example.com",
        "engine.example.com",
        "https://",
        "https:///path",
        "https://a b",
        "",
        "ftp://x",
        "héllo",
    ] {
        assert!(!is_https(bad), "{bad}");
    }
}

#[test]
fn one_click_form_bodies() {
    for ok in [
        "List-Unsubscribe=One-Click",
        "List-Unsubscribe=One-Click\r\n",
        "  List-Unsubscribe=One-Click  ",
        "list-unsubscribe=one-click",
        "List%2DUnsubscribe=One%2dClick",
        "a=1&List-Unsubscribe=One-Click",
        "List-Unsubscribe=One-Click&b=2",
        "List-Unsubscribe=+One-Click+",
    ] {
        assert!(is_one_click_body(ok), "{ok:?}");
    }
    for bad in [
        "",
        "   ",
        "List-Unsubscribe",
        "List-Unsubscribe=",
        "List-Unsubscribe=One-Clicks",
        "List-Unsubscribe=Yes",
        "One-Click",
        "X-List-Unsubscribe=One-Click",
        "List-Unsubscribe=One-Click%ZZ",
        "List-Unsubscribe-Post=One-Click",
        "{\"List-Unsubscribe\":\"One-Click\"}",
    ] {
        assert!(!is_one_click_body(bad), "{bad:?}");
    }
}

#[test]
fn one_click_multipart_bodies() {
    let crlf = "--XyZ\r\nContent-Disposition: form-data; name=\"List-Unsubscribe\"\r\n\r\nOne-Click\r\n--XyZ--\r\n";
    assert!(is_one_click_body(crlf));
    let lf_with_other_part = "--b\nContent-Disposition: form-data; name=\"other\"\n\nx\n--b\ncontent-disposition: form-data; name=\"List-Unsubscribe\"\n\nOne-Click\n--b--";
    assert!(is_one_click_body(lf_with_other_part));
    let wrong_value =
        "--b\r\nContent-Disposition: form-data; name=\"List-Unsubscribe\"\r\n\r\nNo\r\n--b--\r\n";
    assert!(!is_one_click_body(wrong_value));
    let wrong_name = "--b\r\nContent-Disposition: form-data; name=\"List-Subscribe\"\r\n\r\nOne-Click\r\n--b--\r\n";
    assert!(!is_one_click_body(wrong_name));
    assert!(!is_one_click_body("--b\r\n--b--"));
    // The part's name is `other`; only its file name ends in list-unsubscribe.
    let file_name = "--b\r\nContent-Disposition: form-data; name=\"other\"; filename=\"list-unsubscribe\"\r\n\r\nOne-Click\r\n--b--\r\n";
    assert!(!is_one_click_body(file_name));
    let unquoted = "--b\r\nContent-Disposition: form-data; name=List-Unsubscribe\r\n\r\nOne-Click\r\n--b--\r\n";
    assert!(is_one_click_body(unquoted));
}

proptest! {
    #[test]
    fn any_address_and_list_round_trip(email in "\\PC{1,80}", list in "\\PC{1,40}") {
        let t = sign(&email, &list, KEY);
        prop_assert!(t.len() <= TOKEN_MAX);
        prop_assert_eq!(verify(&t, KEY), Ok(UnsubscribeClaims { email, list }));
        prop_assert_eq!(verify(&t, OTHER_KEY), Err(UnsubscribeError::BadSignature));
    }
}
