//! Stable sorting compiled once for the whole Worker.
//!
//! The standard library's `sort`, `sort_by` and `sort_by_key` (driftsort) are compiled anew for
//! every element type and comparison: ~5 KB of wasm each, ~70 KB for the engine's dozen lists.
//! Here the sorting itself — a bottom-up merge sort of positions behind a `dyn` comparison — is
//! compiled once; each caller adds only its comparison and an in-place permutation. Same result
//! as the standard functions (stable: equal elements keep their order), O(n log n) comparisons,
//! O(n) extra words. The lists sorted here are small (a booking's sends and timeline, a page of
//! the queue), so the speed of the standard sort is not missed.

use std::cmp::Ordering;

/// Sorts `items` by `key`, as `slice::sort_by_key` does (stable). Each key is computed once.
pub fn sort_by_key<T, K: Ord>(items: &mut [T], key: impl FnMut(&T) -> K) {
    let keys: Vec<K> = items.iter().map(key).collect();
    let order = sorted_positions(keys.len(), &mut |a, b| keys[a].cmp(&keys[b]));
    permute(items, order);
}

/// Sorts `items` with `compare`, as `slice::sort_by` does (stable).
pub fn sort_by<T>(items: &mut [T], mut compare: impl FnMut(&T, &T) -> Ordering) {
    let order = sorted_positions(items.len(), &mut |a, b| compare(&items[a], &items[b]));
    permute(items, order);
}

/// Sorts `items` in ascending order, as `slice::sort` does (stable).
pub fn sort<T: Ord>(items: &mut [T]) {
    sort_by(items, T::cmp);
}

/// The positions `0..n` in the stable sorted order of what they point at (`compare` compares
/// two positions): a bottom-up merge sort, runs of 1, 2, 4, … merged between two buffers.
fn sorted_positions(n: usize, compare: &mut dyn FnMut(usize, usize) -> Ordering) -> Vec<usize> {
    let mut from: Vec<usize> = (0..n).collect();
    let mut to = vec![0; n];
    let mut width = 1;
    while width < n {
        let mut start = 0;
        while start < n {
            let middle = (start + width).min(n);
            let end = (start + 2 * width).min(n);
            let (mut left, mut right) = (start, middle);
            for slot in &mut to[start..end] {
                // The right run's element goes first only when strictly smaller: stable.
                let take_right = right < end
                    && (left >= middle || compare(from[right], from[left]) == Ordering::Less);
                if take_right {
                    *slot = from[right];
                    right += 1;
                } else {
                    *slot = from[left];
                    left += 1;
                }
            }
            start = end;
        }
        std::mem::swap(&mut from, &mut to);
        width *= 2;
    }
    from
}

/// Reorders `items` so that position `i` holds the element that was at `order[i]`, in place:
/// each cycle of the permutation is followed once, with swaps.
fn permute<T>(items: &mut [T], mut order: Vec<usize>) {
    const DONE: usize = usize::MAX;
    for start in 0..order.len() {
        let mut position = start;
        while order[position] != DONE {
            let source = order[position];
            order[position] = DONE;
            if source != start {
                items.swap(position, source);
            }
            position = source;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn sorts_like_the_standard_library() {
        let mut empty: Vec<u8> = vec![];
        sort(&mut empty);
        assert!(empty.is_empty());
        let mut one = vec![7];
        sort(&mut one);
        assert_eq!(one, [7]);
        let mut words = vec!["pear", "apple", "fig", "apple", "kiwi"];
        sort(&mut words);
        assert_eq!(words, ["apple", "apple", "fig", "kiwi", "pear"]);
        // Stable: equal keys keep their order.
        let mut pairs = vec![(2, 'a'), (1, 'b'), (2, 'c'), (1, 'd'), (0, 'e')];
        sort_by_key(&mut pairs, |p| p.0);
        assert_eq!(pairs, [(0, 'e'), (1, 'b'), (1, 'd'), (2, 'a'), (2, 'c')]);
        sort_by(&mut pairs, |a, b| b.0.cmp(&a.0));
        assert_eq!(pairs, [(2, 'a'), (2, 'c'), (1, 'b'), (1, 'd'), (0, 'e')]);
    }

    #[test]
    fn permute_follows_every_cycle() {
        let mut items = vec!['a', 'b', 'c', 'd', 'e', 'f'];
        // Two cycles (0 → 2 → 4 → 0, 1 → 5 → 1) and a fixed point (3).
        permute(&mut items, vec![2, 5, 4, 3, 0, 1]);
        assert_eq!(items, ['c', 'f', 'e', 'd', 'a', 'b']);
    }

    proptest! {
        #[test]
        fn same_order_as_the_standard_stable_sort(keys in prop::collection::vec(0u8..6, 0..200)) {
            // Each element remembers where it started, so stability shows.
            let items: Vec<(u8, usize)> = keys.iter().copied().zip(0..).collect();
            let mut ours = items.clone();
            let mut std_sorted = items.clone();
            sort_by_key(&mut ours, |i| i.0);
            std_sorted.sort_by_key(|i| i.0);
            prop_assert_eq!(&ours, &std_sorted);
            let mut ours = items.clone();
            let mut std_sorted = items;
            sort_by(&mut ours, |a, b| b.0.cmp(&a.0));
            std_sorted.sort_by_key(|a| std::cmp::Reverse(a.0));
            prop_assert_eq!(ours, std_sorted);
        }
    }
}
