//! Coordinates → IANA time zone, offline and pure: a quadtree of the world's zone boundaries
//! compiled into the binary (~72 KB raw, ~29 KB gzip of data).
//!
//! # Data
//!
//! `tz_lookup/quadtree.dat` and `tz_lookup/zones.txt` are copied verbatim by
//! `scripts/gen-tz-data.mjs` from the npm package `@photostructure/tz-lookup`
//! (<https://www.npmjs.com/package/@photostructure/tz-lookup>, code CC0-1.0), whose tree is built
//! from Evan Siroky's timezone-boundary-builder
//! (<https://github.com/evansiroky/timezone-boundary-builder>, data © OpenStreetMap contributors,
//! ODbL-1.0). Provenance, licence and measured accuracy: `docs/timezone-data.md`.
//!
//! # Format (the package's `tz.js`, decoded here the same way)
//!
//! - `zones.txt`: the zone names, one per line; a leaf refers to a name by its line number.
//! - `quadtree.dat`: ASCII, two bytes per *code*: `code = 56·b0 + b1 − 1995`, in `0..3136`.
//!   Codes `≥ 3136 − zones` are leaves (zone `code − (3136 − zones)`); smaller codes are inner
//!   nodes. The first 48 × 24 codes are the root grid of 7.5° × 7.5° cells, row by row from the
//!   North Pole, each row west to east from −180°. Inner node `n` has its four children at code
//!   positions `1152 + 4n + 2·row + column` (row 0 = north half, column 0 = west half), and a
//!   child's node number is its parent's number (−1 for the root grid) + its code + 1.
//!
//! # Accuracy
//!
//! Lossy near borders: on 7,281 world cities of a different source it gives the same January and
//! July UTC offsets for ~98 % and the exact zone name for ~92 % (see `docs/timezone-data.md`).
//! Open sea answers the nautical zone `Etc/GMT±N`; latitude 90 answers `Etc/GMT`. A few islands
//! by the date line where the tree is a whole day off are corrected by [`DAY_OFF_ISLANDS`].

use crate::domain::timezone::tzdb::Tz;
use std::sync::OnceLock;

/// The quadtree codes (see the module docs).
static QUADTREE: &[u8] = include_bytes!("tz_lookup/quadtree.dat");
/// The zone names, one per line.
static ZONE_NAMES: &str = include_str!("tz_lookup/zones.txt");

/// Root grid: 48 columns of 7.5° of longitude.
const ROOT_COLS: usize = 48;
/// Root grid: 24 rows of 7.5° of latitude.
const ROOT_ROWS: usize = 24;
/// Codes are `56·b0 + b1 − 1995`, in `0..CODE_SPACE`; the top `zones` values are leaves.
const CODE_SPACE: usize = 56 * 56;
/// Deeper than any real tree (the data's maximum is far below): guards against corrupt data.
const MAX_DEPTH: usize = 64;

/// Islands next to the date line where the tree answers the neighbour across it, a whole day off
/// (found by comparing with world city tables; see `docs/timezone-data.md`). Checked before the
/// tree: `(south, north, west, east, zone)` in degrees, boxes drawn around each island's land
/// (OpenStreetMap outlines) and far from the other side's land.
const DAY_OFF_ISLANDS: &[(f64, f64, f64, f64, &str)] = &[
    // Tutuila and Aunu'u, American Samoa (UTC−11); the tree says Pacific/Apia (UTC+13).
    (-14.40, -14.20, -170.86, -170.50, "Pacific/Pago_Pago"),
    // Fakaofo atoll, Tokelau (UTC+13); the tree says Pacific/Pago_Pago (UTC−11).
    (-9.45, -9.30, -171.30, -171.15, "Pacific/Fakaofo"),
    // St Lawrence Island, Alaska (Gambell, Savoonga); the tree says Asia/Anadyr (UTC+12).
    (62.90, 63.85, -171.95, -168.60, "America/Nome"),
    // Little Diomede, Alaska (Big Diomede, Russia, lies west of −168.98).
    (65.72, 65.80, -168.975, -168.85, "America/Nome"),
];

/// The zone names in leaf order, split once (a few µs on the first call of an isolate).
fn names() -> &'static [&'static str] {
    static NAMES: OnceLock<Vec<&'static str>> = OnceLock::new();
    NAMES.get_or_init(|| ZONE_NAMES.lines().filter(|l| !l.is_empty()).collect())
}

/// The code at position `i`, or `None` past the end.
fn code(i: usize) -> Option<usize> {
    let b = QUADTREE.get(2 * i..2 * i + 2)?;
    (56 * b[0] as usize + b[1] as usize).checked_sub(1995)
}

/// The IANA name of the zone at WGS84 `latitude`/`longitude` (degrees, east and north positive),
/// as the data names it (e.g. `Europe/Madrid`, `Etc/GMT-10` at sea). `None` for coordinates that
/// are not finite or out of range (latitude −90…90, longitude −180…180).
pub fn zone_name_at(latitude: f64, longitude: f64) -> Option<&'static str> {
    if !(-90.0..=90.0).contains(&latitude) || !(-180.0..=180.0).contains(&longitude) {
        return None; // also NaN
    }
    let island = DAY_OFF_ISLANDS
        .iter()
        .find(|(s, n, w, e, _)| (*s..=*n).contains(&latitude) && (*w..=*e).contains(&longitude));
    if let Some((.., zone)) = island {
        return Some(zone);
    }
    let index = leaf_at(latitude, longitude)?;
    names().get(index).copied()
}

/// The time zone at WGS84 `latitude`/`longitude` (degrees), DST rules included; `None` as for
/// [`zone_name_at`].
pub fn zone_at(latitude: f64, longitude: f64) -> Option<Tz> {
    // One name → zone parse per call (a binary search of the database's names) rather than parsing all
    // 436 names up front: that made the first call of an isolate cost ~80 µs.
    zone_name_at(latitude, longitude)?.parse().ok()
}

/// The zone number (line of `zones.txt`) of the leaf holding the point; `None` only for corrupt
/// data. The arithmetic mirrors `tz.js` exactly (same divisors), so both agree on cell edges.
fn leaf_at(latitude: f64, longitude: f64) -> Option<usize> {
    if latitude >= 90.0 {
        return names().iter().position(|n| *n == "Etc/GMT");
    }
    let leaf_base = CODE_SPACE.checked_sub(names().len())?;
    // Slightly-larger divisors keep +180° and −90° inside the last column/row.
    let mut x = 48.0 * (180.0 + longitude) / 360.000_000_000_000_06;
    let mut y = 24.0 * (90.0 - latitude) / 180.000_000_000_000_03;
    let (mut xi, mut yi) = (x as usize, y as usize);
    if xi >= ROOT_COLS || yi >= ROOT_ROWS {
        return None;
    }
    let mut node: isize = -1;
    let mut k = code(ROOT_COLS * yi + xi)?;
    for _ in 0..MAX_DEPTH {
        if k >= leaf_base {
            return Some(k - leaf_base);
        }
        node += k as isize + 1;
        y = (2.0 * (y - yi as f64)) % 2.0;
        yi = y as usize;
        x = (2.0 * (x - xi as f64)) % 2.0;
        xi = x as usize;
        k = code(ROOT_COLS * ROOT_ROWS + 4 * node as usize + 2 * yi + xi)?;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every leaf of the tree and the number of inner nodes; `None` if a node points outside the
    /// data or the tree is deeper than [`MAX_DEPTH`].
    fn walk() -> Option<(Vec<usize>, usize)> {
        let leaf_base = CODE_SPACE.checked_sub(names().len())?;
        let nodes = (QUADTREE.len() / 2).checked_sub(ROOT_COLS * ROOT_ROWS)? / 4;
        let mut leaves = Vec::new();
        // (node number of the parent, code position, depth)
        let mut stack: Vec<(isize, usize, usize)> =
            (0..ROOT_COLS * ROOT_ROWS).map(|i| (-1, i, 0)).collect();
        while let Some((parent, pos, depth)) = stack.pop() {
            let k = code(pos)?;
            if k >= leaf_base {
                leaves.push(k - leaf_base);
                continue;
            }
            let node = parent + k as isize + 1;
            if node < 0 || node as usize >= nodes || depth >= MAX_DEPTH {
                return None;
            }
            let first = ROOT_COLS * ROOT_ROWS + 4 * node as usize;
            stack.extend((0..4).map(|c| (node, first + c, depth + 1)));
        }
        Some((leaves, nodes))
    }

    #[test]
    fn every_node_and_leaf_of_the_data_is_in_bounds() {
        assert_eq!(QUADTREE.len() % 2, 0);
        assert_eq!((QUADTREE.len() / 2 - ROOT_COLS * ROOT_ROWS) % 4, 0);
        let (leaves, nodes) = walk().expect("tree in bounds");
        assert!(nodes > 1000, "{nodes} inner nodes");
        assert!(leaves.iter().all(|&z| z < names().len()));
    }

    #[test]
    fn island_corrections_name_zones_of_the_tz_database_and_valid_boxes() {
        for (s, n, w, e, zone) in DAY_OFF_ISLANDS {
            assert!(s < n && w < e, "{zone}");
            assert!(zone.parse::<Tz>().is_ok(), "{zone}");
        }
    }

    #[test]
    fn every_zone_name_is_in_the_bundled_tz_database() {
        assert!(names().len() > 400);
        let missing: Vec<_> = names()
            .iter()
            .filter(|n| n.parse::<Tz>().is_err())
            .collect();
        assert!(
            missing.is_empty(),
            "not in the bundled tz database: {missing:?}"
        );
    }
}
