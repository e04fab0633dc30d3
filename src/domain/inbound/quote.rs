//! The guest's own words out of a reply: the quoted history mail clients append is cut off.
//!
//! No maintained Rust crate does this (the ones on crates.io are unmaintained ports of GitHub's
//! `email_reply_parser`), so this is a small table of the conventions the common clients write,
//! the same cues GitHub's and Mailgun's (talon) parsers use:
//! - an attribution line `On <date>, <name> wrote:` (Gmail, Apple Mail, Thunderbird; Gmail wraps
//!   a long one over two or three lines), also in the guest languages this engine writes
//!   (`Le … a écrit :`, `Am … schrieb …:`, `El … escribió:`, `Em … escreveu:`, `Il … ha scritto:`);
//! - `-----Original Message-----` and its translations (Outlook, older clients);
//! - Outlook's header block: a line of underscores or a `From:` line followed within four lines by
//!   `Sent:`/`Date:` and `To:`/`Subject:` (and their translations);
//! - a block of `>`-quoted lines that runs to the end of the message;
//! - in HTML-only mail ([`cut_html`]), the element a client wraps the history in: Gmail's
//!   `<div class="gmail_quote">`, Apple Mail's and Thunderbird's `<blockquote type="cite">`,
//!   Thunderbird's `moz-cite-prefix`, Outlook's `divRplyFwdMsg` / `appendonsend`, Yahoo's
//!   `yahoo_quoted`.
//!
//! Inline answers (the guest writing between quoted lines) are kept whole: what would be lost by
//! cutting is the guest's. When the cut leaves nothing (a guest who wrote below the quote), the
//! quoted lines are dropped instead and the rest kept.

/// Attribution endings (lower case, after trimming).
const WROTE: [&str; 8] = [
    "wrote:",
    "a écrit :",
    "a écrit:",
    "schrieb:",
    "escribió:",
    "escreveu:",
    "ha scritto:",
    "schreef:",
];
/// Attribution openings (lower case).
const ON: [&str; 7] = ["on ", "le ", "am ", "el ", "em ", "il ", "op "];
/// The verb of an attribution that names the sender's address after it (Gmail in German and
/// Dutch: `Am 3. März 2026 um 10:00 schrieb Anna <a@b.c>:`, `Op 3 mrt. 2026 om 10:00 schreef
/// Anna <a@b.c>:`); such a line is an attribution only when it also opens like one and ends
/// with `>:`, so a guest's own "Am Montag schrieb ich:" is kept.
const VERB: [&str; 7] = [
    " wrote ",
    " schrieb ",
    " schreef ",
    " a écrit ",
    " escribió ",
    " escreveu ",
    " ha scritto ",
];
const ORIGINAL: [&str; 6] = [
    "original message",
    "ursprüngliche nachricht",
    "message d'origine",
    "mensaje original",
    "messaggio originale",
    "mensagem original",
];
const HEADER_FROM: [&str; 5] = ["from:", "de:", "von:", "da:", "van:"];
const HEADER_SENT: [&str; 10] = [
    "sent:",
    "date:",
    "gesendet:",
    "datum:",
    "envoyé:",
    "enviado:",
    "inviato:",
    "data:",
    "verzonden:",
    "fecha:",
];
const HEADER_TO: [&str; 12] = [
    "to:",
    "subject:",
    "an:",
    "à:",
    "a:",
    "para:",
    "betreff:",
    "objet:",
    "oggetto:",
    "asunto:",
    "aan:",
    "onderwerp:",
];
/// Where HTML-only mail's quoted history starts (lower case, searched in the lower-cased HTML).
const HTML_QUOTE: [&str; 12] = [
    "<div class=\"gmail_quote",
    "<div class='gmail_quote",
    "<blockquote type=\"cite\"",
    "<blockquote type='cite'",
    "<div class=\"moz-cite-prefix\"",
    "<div id=\"divrplyfwdmsg\"",
    "<div id=\"appendonsend\"",
    "<div class=\"yahoo_quoted",
    "<div id=\"mail-editor-reference-message-container\"",
    "<hr id=\"stopspelling\"",
    "<div class=\"protonmail_quote\"",
    "<blockquote class=\"gmail_quote",
];

/// What [`strip`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stripped {
    /// The guest's words, line breaks `\n`, trailing blank lines removed.
    pub text: String,
    /// Whether quoted history was removed.
    pub removed: bool,
}

/// Lower case, French spaces before `:` folded (`De :` → `de:`; Outlook writes a no-break
/// space there).
fn key(line: &str) -> String {
    line.trim()
        .to_lowercase()
        .replace(['\u{a0}', '\u{202f}'], " ")
        .replace(" :", ":")
}

/// The HTML of an HTML-only message before the element its client wrapped the quoted history in
/// ([`HTML_QUOTE`]), or `None` when there is no such element or nothing but markup before it
/// (then the whole message is read and [`strip`] looks for the history in its text).
pub fn cut_html(html: &str) -> Option<&str> {
    let lower = html.to_ascii_lowercase();
    let at = HTML_QUOTE.iter().filter_map(|m| lower.find(m)).min()?;
    let above = &html[..at];
    let has_text = mail_parser::decoders::html::html_to_text(above)
        .chars()
        .any(|c| c.is_alphanumeric());
    has_text.then_some(above)
}

fn starts_with_any(s: &str, list: &[&str]) -> bool {
    list.iter().any(|p| s.starts_with(p))
}

/// `true` when `lines[i..]` is an attribution (`On … wrote:`): one line that ends like one and
/// either opens like one or is followed by quoted lines; or up to three lines without a blank
/// one between them (Gmail wraps a long one) that open like one.
fn attribution(lines: &[&str], i: usize) -> bool {
    let first = key(lines[i]);
    if first.is_empty() {
        return false;
    }
    let opens = starts_with_any(&first, &ON);
    let mut joined = first;
    for extra in 0..3 {
        if extra > 0 {
            match lines.get(i + extra).map(|l| key(l)) {
                Some(l) if opens && !l.is_empty() => {
                    joined.push(' ');
                    joined.push_str(&l);
                }
                _ => return false,
            }
        }
        let named = opens
            && joined.ends_with(">:")
            && joined.contains('@')
            && VERB.iter().any(|v| joined.contains(v));
        if named || WROTE.iter().any(|w| joined.ends_with(w)) {
            let next_quoted = lines[i + extra + 1..]
                .iter()
                .find(|l| !l.trim().is_empty())
                .is_some_and(|l| l.trim_start().starts_with('>'));
            return opens || next_quoted;
        }
    }
    false
}

fn original_message(line: &str) -> bool {
    let k = key(line);
    (k.starts_with("---") || k.starts_with("***")) && ORIGINAL.iter().any(|o| k.contains(o))
        || k.len() >= 10 && k.chars().all(|c| c == '_')
}

/// Outlook's block: `From:` then, within the next four lines, a sent/date line and a to/subject
/// line.
fn header_block(lines: &[&str], i: usize) -> bool {
    let k = key(lines[i]).trim_start_matches('*').to_string();
    if !starts_with_any(&k, &HEADER_FROM) {
        return false;
    }
    let next: Vec<String> = lines[i + 1..]
        .iter()
        .take(4)
        .map(|l| key(l).trim_start_matches('*').to_string())
        .collect();
    next.iter().any(|l| starts_with_any(l, &HEADER_SENT))
        && next.iter().any(|l| starts_with_any(l, &HEADER_TO))
}

fn quoted(line: &str) -> bool {
    line.trim_start().starts_with('>')
}

/// Cuts the quoted history off `text` (any line endings).
pub fn strip(text: &str) -> Stripped {
    let normalised = text.replace("\r\n", "\n").replace('\r', "\n");
    let lines: Vec<&str> = normalised.split('\n').collect();
    let mut cut = None;
    for i in 0..lines.len() {
        if attribution(&lines, i) || original_message(lines[i]) || header_block(&lines, i) {
            cut = Some(i);
            break;
        }
        // A quoted block that runs to the end (blank lines allowed).
        if quoted(lines[i]) && lines[i..].iter().all(|l| quoted(l) || l.trim().is_empty()) {
            cut = Some(i);
            break;
        }
    }
    let above = match cut {
        Some(i) => &lines[..i],
        None => &lines[..],
    };
    let kept = trim_end(above);
    let whole = if kept.trim().is_empty() {
        &lines[..]
    } else {
        above
    };
    if let Some(text) = below_history(whole) {
        return Stripped {
            text,
            removed: true,
        };
    }
    if !kept.trim().is_empty() || cut.is_none() {
        return Stripped {
            removed: cut.is_some(),
            text: kept,
        };
    }
    // Nothing but history around the guest's lines: keep every line that is not quoted.
    let unquoted: Vec<&str> = lines.iter().copied().filter(|l| !quoted(l)).collect();
    Stripped {
        text: trim_end(&unquoted).trim_start_matches('\n').to_string(),
        removed: true,
    }
}

/// A guest who wrote below the history: one quoted block first (after its attribution, if any),
/// then the guest's words, and no quoted line further down. `None` for anything else.
fn below_history(lines: &[&str]) -> Option<String> {
    let start = lines.iter().position(|l| !l.trim().is_empty())?;
    let mut block = start;
    if attribution(lines, start) {
        block = (start..lines.len().min(start + 4)).find(|&j| quoted(lines[j]))?;
    }
    if !quoted(lines[block]) {
        return None;
    }
    let end =
        (block + 1..lines.len()).find(|&j| !quoted(lines[j]) && !lines[j].trim().is_empty())?;
    (!lines[end..].iter().any(|l| quoted(l))).then(|| trim_end(&lines[end..]))
}

fn trim_end(lines: &[&str]) -> String {
    let mut out: Vec<&str> = lines.iter().map(|l| l.trim_end()).collect();
    while out.last().is_some_and(|l| l.is_empty()) {
        out.pop();
    }
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (what the client wrote, what the guest wrote).
    const CASES: &[(&str, &str, &str)] = &[
        (
            "gmail",
            "Can we check in early, around 11?\r\n\r\nOn Sat, Dec 5, 2026 at 10:00 AM Example Trips <reply+abc@reply.example.com> wrote:\r\n\r\n> Your stay is confirmed.\r\n> See you soon.\r\n",
            "Can we check in early, around 11?",
        ),
        (
            "gmail, attribution wrapped",
            "We arrive after midnight.\n\nOn Sat, Dec 5, 2026 at 10:00 AM Example Trips <\nreply+abc@reply.example.com> wrote:\n\n> Your stay is confirmed.\n",
            "We arrive after midnight.",
        ),
        (
            "apple mail",
            "Please add a cot.\n\nSent from my iPhone\n\n> On 5 Dec 2026, at 10:00, Example Trips <reply+abc@reply.example.com> wrote:\n> \n> Your stay is confirmed.\n",
            "Please add a cot.\n\nSent from my iPhone",
        ),
        (
            "outlook, original message",
            "Is parking included?\n\n-----Original Message-----\nFrom: Example Trips <bookings@example.com>\nSent: Saturday, December 5, 2026 10:00 AM\nTo: guest@example.com\nSubject: Your stay is confirmed\n\nYour stay is confirmed.\n",
            "Is parking included?",
        ),
        (
            "outlook, header block",
            "Thanks!\nAna\n\n________________________________\nFrom: Example Trips <reply+abc@reply.example.com>\nSent: Saturday, December 5, 2026 10:00\nTo: Ana <ana@example.com>\nSubject: Your stay is confirmed\n\nYour stay is confirmed.",
            "Thanks!\nAna",
        ),
        (
            "outlook, bold header block without a line",
            "See you then.\n\n*From:* Example Trips <bookings@example.com>\n*Sent:* Saturday\n*To:* ana@example.com\n*Subject:* Confirmed\n",
            "See you then.",
        ),
        (
            "french attribution",
            "Pouvons-nous arriver tôt ?\n\nLe sam. 5 déc. 2026 à 10:00, Example Trips <reply+abc@reply.example.com> a écrit :\n> Votre séjour est confirmé.\n",
            "Pouvons-nous arriver tôt ?",
        ),
        (
            "german header block",
            "Danke.\n\nVon: Example Trips <bookings@example.com>\nGesendet: Samstag, 5. Dezember 2026 10:00\nAn: gast@example.com\nBetreff: Bestätigt\n",
            "Danke.",
        ),
        (
            "spanish attribution",
            "¿Hay cuna?\n\nEl sáb, 5 dic 2026 a las 10:00, Example Trips (<reply+abc@reply.example.com>) escribió:\n> Su estancia está confirmada.\n",
            "¿Hay cuna?",
        ),
        (
            "inline answers are kept",
            "> Check-in from 15:00.\nCan it be 13:00?\n> Breakfast not included.\nHow much is it?\n",
            "> Check-in from 15:00.\nCan it be 13:00?\n> Breakfast not included.\nHow much is it?",
        ),
        (
            "written below the quote",
            "> Your stay is confirmed.\n> See you soon.\n\nOne more question: is there a lift?\n",
            "One more question: is there a lift?",
        ),
        (
            "written below an attribution and its quote",
            "On Sat, Dec 5, 2026 at 10:00 AM Example Trips wrote:\n> Your stay is confirmed.\n\nIs there a lift?\n",
            "Is there a lift?",
        ),
        (
            "german gmail attribution with the address",
            "Können wir früher einchecken?\n\nAm 3. März 2026 um 10:00 schrieb Anna <a@b.c>:\n\n> Ihr Aufenthalt ist bestätigt.\n",
            "Können wir früher einchecken?",
        ),
        (
            "german gmail attribution with the address, no quote marks below",
            "Danke!\n\nAm Di., 3. März 2026 um 10:00 Uhr schrieb Example Trips <reply+abc@reply.example.com>:\nIhr Aufenthalt ist bestätigt.\n",
            "Danke!",
        ),
        (
            "dutch gmail attribution wrapped over two lines",
            "Is er een lift?\n\nOp di 3 mrt 2026 om 10:00 schreef Example Trips <\nreply+abc@reply.example.com>:\n\n> Uw verblijf is bevestigd.\n",
            "Is er een lift?",
        ),
        (
            "a guest's own sentence that opens like an attribution is kept",
            "Am Montag schrieb ich Ihnen:\nwir kommen zu dritt.\n",
            "Am Montag schrieb ich Ihnen:\nwir kommen zu dritt.",
        ),
        (
            "italian outlook header block",
            "Grazie, a presto.\n\nDa: Example Trips <bookings@example.com>\nInviato: sabato 5 dicembre 2026 10:00\nA: Giulia <giulia@example.it>\nOggetto: Il tuo soggiorno è confermato\n\nIl tuo soggiorno è confermato.\n",
            "Grazie, a presto.",
        ),
        (
            "spanish outlook header block",
            "¿Hay parking?\n\n________________________________\nDe: Example Trips <bookings@example.com>\nEnviado: sábado, 5 de diciembre de 2026 10:00\nPara: Ana <ana@example.es>\nAsunto: Su estancia está confirmada\n",
            "¿Hay parking?",
        ),
        (
            "french outlook header block with no-break spaces",
            "Merci !\n\nDe\u{a0}: Example Trips <bookings@example.com>\nEnvoyé\u{a0}: samedi 5 décembre 2026 10:00\nÀ\u{a0}: Julie <julie@example.fr>\nObjet\u{a0}: Votre séjour est confirmé\n",
            "Merci !",
        ),
        (
            "dutch outlook header block",
            "Tot dan.\n\nVan: Example Trips <bookings@example.com>\nVerzonden: zaterdag 5 december 2026 10:00\nAan: jan@example.nl\nOnderwerp: Bevestigd\n",
            "Tot dan.",
        ),
        (
            "nothing quoted",
            "Hello,\nmy friend wrote: we love the place.\nBest\n",
            "Hello,\nmy friend wrote: we love the place.\nBest",
        ),
    ];

    #[test]
    fn each_client_s_history_is_cut_and_the_guest_s_words_kept() {
        for (name, raw, want) in CASES {
            assert_eq!(strip(raw).text, *want, "{name}");
        }
        assert!(strip(CASES[0].1).removed);
        let last = CASES.len() - 1;
        assert_eq!(CASES[last].0, "nothing quoted");
        assert!(!strip(CASES[last].1).removed);
    }

    #[test]
    fn html_history_is_cut_at_its_client_s_quote_element() {
        let gmail = "<div dir=\"ltr\">Can we arrive at 23:00?</div><br><div class=\"gmail_quote gmail_quote_container\"><div dir=\"ltr\" class=\"gmail_attr\">On Sat wrote:</div><blockquote class=\"gmail_quote\">Confirmed</blockquote></div>";
        assert_eq!(
            cut_html(gmail),
            Some("<div dir=\"ltr\">Can we arrive at 23:00?</div><br>")
        );
        let apple = "<html><body>Merci<br><blockquote type=\"cite\">Votre séjour</blockquote></body></html>";
        assert_eq!(cut_html(apple), Some("<html><body>Merci<br>"));
        // Nothing of the guest's above the quote, or no quote: the whole message is read.
        assert_eq!(
            cut_html("<div><br></div><div class=\"gmail_quote\">x</div>"),
            None
        );
        assert_eq!(cut_html("<p>Just a question</p>"), None);
    }
}
