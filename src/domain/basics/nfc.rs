//! Unicode Normalization Form C (NFC, Unicode Standard Annex #15,
//! <https://unicode.org/reports/tr15/>) of supplier text, with the tables of the
//! `unicode-normalization` crate.
//!
//! That crate's own `nfc()` iterator decides between canonical and compatibility decomposition at
//! run time, so a build that only ever asks for NFC still carries the compatibility tables
//! (~55 KB raw of wasm, used only by NFKC/NFKD). This module runs the same three steps of the
//! annex over the crate's canonical functions only ([`decompose_canonical`],
//! [`canonical_combining_class`], [`compose`]), so the compatibility tables are left out of the
//! Worker. A test compares the result with the crate's `nfc()` on every code point and on
//! random strings of combining marks, Hangul jamo and the like.
//!
//! Text is normalised in segments that end before an ASCII character following a non-ASCII one:
//! an ASCII character has no decomposition, no combining class and is never the second character
//! of a composition, so nothing on its left combines or reorders with anything on its right, and
//! a reader can stop early without normalising the rest of the text.

use unicode_normalization::char::{canonical_combining_class, compose, decompose_canonical};

/// The characters of `text` in NFC, produced lazily segment by segment.
pub fn nfc(text: &str) -> impl Iterator<Item = char> + '_ {
    segments(text).flat_map(|segment| {
        let (ascii, normalised) = if segment.is_ascii() {
            (segment, Vec::new())
        } else {
            ("", nfc_segment(segment))
        };
        ascii.chars().chain(normalised)
    })
}

/// `text` cut before every ASCII character that follows a non-ASCII one: runs of ASCII, each
/// followed by the non-ASCII run after it.
fn segments(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let non_ascii = rest.find(|c: char| !c.is_ascii()).unwrap_or(rest.len());
        let end = rest[non_ascii..]
            .find(|c: char| c.is_ascii())
            .map_or(rest.len(), |i| non_ascii + i);
        let (segment, tail) = rest.split_at(end);
        rest = tail;
        Some(segment)
    })
}

/// NFC of one segment: canonical decomposition, canonical ordering of each run of non-starters
/// (a stable sort by combining class), then canonical composition of each character with the
/// last starter unless a character between them blocks it (UAX #15, sections 1.3 and 9).
fn nfc_segment(segment: &str) -> Vec<char> {
    let mut decomposed: Vec<char> = Vec::with_capacity(segment.len());
    for c in segment.chars() {
        decompose_canonical(c, |d| decomposed.push(d));
    }
    let mut i = 0;
    while i < decomposed.len() {
        let start = i;
        while i < decomposed.len() && canonical_combining_class(decomposed[i]) != 0 {
            i += 1;
        }
        crate::domain::basics::sort::sort_by_key(&mut decomposed[start..i], |&c| {
            canonical_combining_class(c)
        });
        i += 1;
    }
    let mut out: Vec<char> = Vec::with_capacity(decomposed.len());
    // The last starter's index in `out`, and the combining class of the last character placed
    // after it (`None`: the next character is the starter's neighbour).
    let mut starter: Option<usize> = None;
    let mut last_class: Option<u8> = None;
    for c in decomposed {
        let class = canonical_combining_class(c);
        if let Some(s) = starter {
            let blocked = last_class.is_some_and(|last| last == 0 || last >= class);
            if !blocked {
                if let Some(composite) = compose(out[s], c) {
                    out[s] = composite;
                    continue;
                }
            }
        }
        if class == 0 {
            starter = Some(out.len());
            last_class = None;
        } else {
            last_class = Some(class);
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use unicode_normalization::UnicodeNormalization;

    fn ours(s: &str) -> String {
        nfc(s).collect()
    }

    #[test]
    fn composes_reorders_and_keeps_ascii() {
        assert_eq!(ours("Cafe\u{301}"), "Café");
        assert_eq!(ours("Hôtel"), "Hôtel");
        assert_eq!(ours("plain ASCII, untouched"), "plain ASCII, untouched");
        assert_eq!(ours(""), "");
        // Dot below (class 220) before dot above (230) whatever the input order: ṩ.
        assert_eq!(ours("s\u{307}\u{323}"), "\u{1E69}");
        assert_eq!(ours("s\u{323}\u{307}"), "\u{1E69}");
        // Hangul jamo L + V + T → one syllable; a syllable decomposes and recomposes.
        assert_eq!(ours("\u{1100}\u{1161}\u{11A8}"), "\u{AC01}");
        assert_eq!(ours("\u{AC00}\u{11A8}"), "\u{AC01}");
        // A singleton (Ohm sign) becomes its canonical equivalent; compatibility forms stay.
        assert_eq!(ours("\u{2126}"), "\u{3A9}");
        assert_eq!(ours("\u{FB01}"), "\u{FB01}");
        // Blocked: a mark of the same class in between stops the composition.
        assert_eq!(ours("a\u{301}\u{301}"), "á\u{301}");
    }

    #[test]
    fn segments_end_before_ascii_after_non_ascii() {
        let parts: Vec<&str> = segments("ab\u{e9}\u{301}cd\u{fc}").collect();
        assert_eq!(parts, ["ab\u{e9}\u{301}", "cd\u{fc}"]);
        assert_eq!(segments("").count(), 0);
        assert_eq!(segments("\u{301}x").collect::<Vec<_>>(), ["\u{301}", "x"]);
    }

    #[test]
    fn every_code_point_alone_and_before_marks_matches_the_crate() {
        // Pairs with marks where compositions live: below U+3100 (Latin, Greek, Cyrillic,
        // Indic, Kana…) and the Brahmic and musical blocks of plane 1.
        let composes = |c: u32| {
            c < 0x3100 || (0x11000..0x11800).contains(&c) || (0x1D100..0x1D200).contains(&c)
        };
        for c in (0..=0x10FFFFu32).filter_map(char::from_u32) {
            let s = c.to_string();
            assert_eq!(ours(&s), s.nfc().collect::<String>(), "U+{:04X}", c as u32);
            if composes(c as u32) && canonical_combining_class(c) == 0 {
                for mark in ['\u{301}', '\u{323}', '\u{345}', '\u{3099}', '\u{CBC}'] {
                    let s = format!("{c}{mark}");
                    assert_eq!(ours(&s), s.nfc().collect::<String>(), "U+{:04X}", c as u32);
                }
            }
        }
    }

    /// Characters whose NFC is not trivial: combining marks of several classes, letters they
    /// compose with, Hangul jamo and syllables, singletons, composition exclusions, starters that
    /// compose with a preceding starter (Indic vowel signs), and ASCII.
    const ALPHABET: &[char] = &[
        'a',
        'e',
        'o',
        'u',
        's',
        'A',
        ' ',
        '1',
        '\u{300}',
        '\u{301}',
        '\u{302}',
        '\u{303}',
        '\u{308}',
        '\u{30A}',
        '\u{31B}',
        '\u{323}',
        '\u{327}',
        '\u{328}',
        '\u{345}',
        '\u{35C}',
        '\u{3B1}',
        '\u{3C9}',
        '\u{1F00}',
        '\u{E9}',
        '\u{1E69}',
        '\u{1100}',
        '\u{1161}',
        '\u{11A8}',
        '\u{AC00}',
        '\u{AC01}',
        '\u{2126}',
        '\u{212B}',
        '\u{958}',
        '\u{B47}',
        '\u{B3E}',
        '\u{B56}',
        '\u{BC6}',
        '\u{BBE}',
        '\u{F71}',
        '\u{F72}',
        '\u{F74}',
        '\u{F80}',
        '\u{3099}',
        '\u{304B}',
        '\u{FB01}',
        '\u{1D15E}',
        '\u{11099}',
        '\u{110BA}',
        '\u{FFFD}',
    ];

    proptest! {
        #[test]
        fn random_strings_match_the_crate(indices in prop::collection::vec(0..ALPHABET.len(), 0..24)) {
            let s: String = indices.iter().map(|&i| ALPHABET[i]).collect();
            prop_assert_eq!(ours(&s), s.nfc().collect::<String>());
        }
    }
}
