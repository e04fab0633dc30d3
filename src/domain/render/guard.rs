//! The content lock applied to what **we** wrote, not to what a guest or a hotel is called.
//!
//! A client email is rendered twice from the same inputs ([`guarded`]):
//! - the **neutral** render: every string the inputs carry (guest and hotel names, room names,
//!   confirmation numbers, instructions, …: everything a supplier or a guest could have written) is
//!   replaced by the neutral token [`NEUTRAL`]; what remains is the template's own output, and the
//!   content lock ([`ContentLock::check`]) runs on it. Its violations are stored with the email
//!   ([`LockVerdict::template`]) and block it in the outbox gate: they are template bugs.
//! - the **real** render, from inputs whose string values had every link to the engine (admin
//!   paths, `/actions/` links, the engine's own host) replaced by [`LINK_REMOVED`]: so a guest
//!   surnamed Wrangler or a hotel called "Outbox {{Suites}}" gets their email, and a link to our
//!   admin inside a supplier value is never emitted to a guest.
//!
//! A string whose neutral (or defanged) form the input type refuses (an email address, an enum's
//! stored name) keeps its value: it is typed data the adapters already parsed, and what the
//! template does with it is the template's doing.
//!
//! The lock runs at render time (in the journey step) and its verdict travels with the email,
//! because only the renderer has the inputs: the outbox holds rendered text alone and could not
//! tell a template word from a guest's name. The gate ([`judge`]) blocks on the stored verdict,
//! and still checks the real output for links (a second net under the defanging). An email rendered
//! without a verdict (marketing text the operator wrote, older queued rows) is checked whole, as
//! before.
//!
//! Owner alerts are never blocked: [`defang_placeholders`] breaks template-like markers in them
//! (`{{` → `{ {`) and they go out.

use crate::domain::basics::json;
use crate::domain::email::content_lock::{
    self, fold_hiding_characters, ContentLock, LockVerdict, LockViolation,
};
use crate::domain::email::Audience;
use crate::domain::outbox::outgoing::OutgoingEmail;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use super::RenderError;

/// What every input string becomes in the neutral render.
pub const NEUTRAL: &str = "x";

/// What a link to the engine inside an input string becomes in the real render.
pub const LINK_REMOVED: &str = "[link removed]";

/// Most rounds of link removal in one string (each round removes at least one token).
const MAX_DEFANG_ROUNDS: usize = 16;

/// The lock on a whole email. Defined here, where the lock meets the rendered email, so that the
/// lock's rules (`crate::domain::email::content_lock`) know nothing of the email types.
impl ContentLock {
    /// Checks an email's subject, text and HTML. `Err` lists every violation once, in the order
    /// found (subject, then text, then HTML).
    pub fn check(&self, email: &OutgoingEmail) -> Result<(), Vec<LockViolation>> {
        let owner = email.audience == Audience::Owner && email.kind.audience() == Audience::Owner;
        // The calendar parts are text the guest's calendar shows: judged like the text part.
        let mut text = email.text.clone();
        for part in email.calendar_parts() {
            text.push('\n');
            text.push_str(part.text());
        }
        self.check_parts(owner, &email.subject, &text, &email.html)
    }
}

/// Where the text that tripped the lock came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextSource {
    /// The template's own output (the neutral render): a template bug.
    Template,
    /// A supplier or guest value in the real render (a link the defanging missed).
    SupplierValue,
    /// The whole email: it was rendered without a verdict (operator-written marketing, or queued
    /// before verdicts existed), so template and values cannot be told apart.
    Unattributed,
}

impl TextSource {
    /// For the owner alert and `last_error`.
    pub fn describe(self) -> &'static str {
        match self {
            TextSource::Template => {
                "in the template's own output (every supplier value neutralised): fix the template"
            }
            TextSource::SupplierValue => "in a supplier or guest value",
            TextSource::Unattributed => {
                "in the email as written (no template/value split was recorded for it)"
            }
        }
    }
}

/// Why the gate refuses an email ([`judge`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tripped {
    pub source: TextSource,
    pub violations: Vec<LockViolation>,
}

impl Tripped {
    /// One line: `content lock: <where>: <violations>`.
    pub fn describe(&self) -> String {
        format!(
            "content lock: {}: {}",
            self.source.describe(),
            content_lock::describe(&self.violations)
        )
    }
}

/// Renders a client email from `input` with the lock applied to the template's own output (see the
/// module docs). `render` must be a pure function of its input (it is called twice). An owner
/// email is rendered once, unchanged, without a verdict (owner alerts are defanged, never blocked).
///
/// Errors: those of `render`, or [`RenderError::Refused`] if `input` does not round-trip through
/// JSON (a programming error).
pub fn guarded<T, F>(lock: &ContentLock, input: &T, render: F) -> Result<OutgoingEmail, RenderError>
where
    T: Serialize + DeserializeOwned,
    F: Fn(&T) -> Result<OutgoingEmail, RenderError>,
{
    let original = serde_json::to_value(input)
        .map_err(|e| RenderError::Refused(format!("inputs are not JSON: {e}")))?;
    let refused =
        |e: serde_json::Error| RenderError::Refused(format!("inputs do not round-trip: {e}"));
    let (defanged, links_removed) =
        rewrite::<T>(&original, |s| defang_links(lock, s)).map_err(refused)?;
    let (neutral, _) = rewrite::<T>(&original, |s| (s != NEUTRAL).then(|| NEUTRAL.to_string()))
        .map_err(refused)?;
    let mut email = render(&defanged)?;
    if email.audience == Audience::Owner {
        return Ok(email);
    }
    let template = match lock.check(&render(&neutral)?) {
        Ok(()) => Vec::new(),
        Err(v) => v,
    };
    email.lock = Some(LockVerdict {
        template,
        links_removed,
    });
    Ok(email)
}

/// Whether `email` may go (client mail) — see the module docs. Owner emails pass unless they carry
/// placeholders (the caller then defangs them with [`defang_placeholders`] and sends anyway).
pub fn judge(lock: &ContentLock, email: &OutgoingEmail) -> Result<(), Tripped> {
    let Some(verdict) = &email.lock else {
        return lock.check(email).map_err(|violations| Tripped {
            source: TextSource::Unattributed,
            violations,
        });
    };
    if !verdict.template.is_empty() {
        return Err(Tripped {
            source: TextSource::Template,
            violations: verdict.template.clone(),
        });
    }
    let links: Vec<LockViolation> = match lock.check(email) {
        Ok(()) => Vec::new(),
        Err(v) => v
            .into_iter()
            .filter(|v| matches!(v, LockViolation::AdminUrl(_) | LockViolation::ActionLink(_)))
            .collect(),
    };
    if links.is_empty() {
        Ok(())
    } else {
        Err(Tripped {
            source: TextSource::SupplierValue,
            violations: links,
        })
    }
}

/// Breaks every unrendered-template marker in an owner alert so it passes the lock: a space goes
/// between the two characters (`{{` → `{ {`, `${` → `$ {`, `]]` → `] ]`, …), after characters that
/// render as nothing are removed (they could hide a marker). The text stays readable.
pub fn defang_placeholders(email: &mut OutgoingEmail) {
    for part in [&mut email.subject, &mut email.text, &mut email.html] {
        *part = defang_markers(&fold_hiding_characters(part));
    }
}

/// `s` with a space inside every two-character template marker.
pub fn defang_markers(s: &str) -> String {
    const PAIRS: [(&str, &str); 9] = [
        ("{{", "{ {"),
        ("}}", "} }"),
        ("{%", "{ %"),
        ("%}", "% }"),
        ("{#", "{ #"),
        ("#}", "# }"),
        ("${", "$ {"),
        ("[[", "[ ["),
        ("]]", "] ]"),
    ];
    let mut out = s.to_string();
    // `{{{` → `{ {{` after one pass: repeat until nothing changes (each pass only adds spaces
    // between marker characters, so at most one pass per marker character).
    loop {
        let next = PAIRS
            .iter()
            .fold(out.clone(), |acc, (from, to)| acc.replace(from, to));
        if next == out {
            return out;
        }
        out = next;
    }
}

/// `s` with every link to the engine replaced by [`LINK_REMOVED`], or `None` when it has none.
fn defang_links(lock: &ContentLock, s: &str) -> Option<String> {
    let mut out = fold_hiding_characters(s);
    let mut changed = false;
    for _ in 0..MAX_DEFANG_ROUNDS {
        let mut spans = lock.link_spans(&out);
        if spans.is_empty() {
            break;
        }
        crate::domain::basics::sort::sort(&mut spans);
        // Replace from the end so earlier offsets stay valid; overlapping spans merge.
        let mut merged: Vec<(usize, usize)> = Vec::new();
        for (s, e) in spans {
            match merged.last_mut() {
                Some(last) if s <= last.1 => last.1 = last.1.max(e),
                _ => merged.push((s, e)),
            }
        }
        for (s, e) in merged.into_iter().rev() {
            out.replace_range(s..e, LINK_REMOVED);
        }
        changed = true;
    }
    changed.then_some(out)
}

/// `original` (the JSON of a `T`) with each string leaf rewritten by `f` (`None` = keep), keeping
/// only rewrites under which the whole still deserializes as a `T` (typed strings such as email
/// addresses and enum names keep their value). Returns the rewritten `T` and how many leaves
/// changed. Errors only when `original` itself is not a `T`.
fn rewrite<T: DeserializeOwned>(
    original: &Value,
    f: impl Fn(&str) -> Option<String>,
) -> Result<(T, u32), serde_json::Error> {
    let mut value = original.clone();
    let mut changed = 0;
    let mut paths = Vec::new();
    string_paths(&value, &mut Vec::new(), &mut paths);
    for path in paths {
        let Some(Value::String(old)) = pointer_mut(&mut value, &path) else {
            continue;
        };
        let Some(new) = f(old) else {
            continue;
        };
        let old = std::mem::replace(old, new);
        if json::from_value::<T>(&value).is_ok() {
            changed += 1;
        } else if let Some(Value::String(leaf)) = pointer_mut(&mut value, &path) {
            *leaf = old;
        }
    }
    Ok((json::from_value(&value)?, changed))
}

/// One step into a JSON value: an object key or an array index.
#[derive(Debug, Clone)]
enum Step {
    Key(String),
    Index(usize),
}

/// Collects the path of every string leaf of `v` (object keys are not leaves).
fn string_paths(v: &Value, at: &mut Vec<Step>, out: &mut Vec<Vec<Step>>) {
    match v {
        Value::String(_) => out.push(at.clone()),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                at.push(Step::Index(i));
                string_paths(item, at, out);
                at.pop();
            }
        }
        Value::Object(map) => {
            for (k, item) in map {
                at.push(Step::Key(k.clone()));
                string_paths(item, at, out);
                at.pop();
            }
        }
        _ => {}
    }
}

fn pointer_mut<'v>(v: &'v mut Value, path: &[Step]) -> Option<&'v mut Value> {
    path.iter().try_fold(v, |v, step| match step {
        Step::Key(k) => v.get_mut(k.as_str()),
        Step::Index(i) => v.get_mut(*i),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_are_broken_apart_even_when_run_together() {
        assert_eq!(
            defang_markers("a {{{b}}} ${c} [[d]]"),
            "a { { {b} } } $ {c} [ [d] ]"
        );
        assert_eq!(defang_markers("plain {text} [x]"), "plain {text} [x]");
    }

    #[test]
    fn links_to_the_engine_are_removed_from_values() {
        let lock = ContentLock::from_config("https://engine.example.com", "outbox");
        assert_eq!(
            defang_links(&lock, "see https://x.example/admin/y and /actions/tok").as_deref(),
            Some("see [link removed] and [link removed]")
        );
        assert_eq!(
            defang_links(&lock, "engine.example.com/unsubscribe/../health").as_deref(),
            Some("[link removed]")
        );
        assert_eq!(defang_links(&lock, "Outbox Hotel {{x}}"), None);
    }
}
