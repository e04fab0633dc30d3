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
//! - a block of `>`-quoted lines that runs to the end of the message.
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
const ORIGINAL: [&str; 6] = [
    "original message",
    "ursprüngliche nachricht",
    "message d'origine",
    "mensaje original",
    "messaggio originale",
    "mensagem original",
];
const HEADER_FROM: [&str; 4] = ["from:", "de:", "von:", "da:"];
const HEADER_SENT: [&str; 7] = [
    "sent:",
    "date:",
    "gesendet:",
    "envoyé:",
    "enviado:",
    "inviato:",
    "data:",
];
const HEADER_TO: [&str; 6] = ["to:", "subject:", "an:", "à:", "para:", "betreff:"];

/// What [`strip`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stripped {
    /// The guest's words, line breaks `\n`, trailing blank lines removed.
    pub text: String,
    /// Whether quoted history was removed.
    pub removed: bool,
}

/// Lower case, French spaces before `:` folded (`De :` → `de:`).
fn key(line: &str) -> String {
    line.trim().to_lowercase().replace(" :", ":")
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
        if WROTE.iter().any(|w| joined.ends_with(w)) {
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
        assert!(!strip(CASES[12].1).removed);
    }
}
