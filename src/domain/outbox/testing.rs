//! Test support, not used by the Worker: the deterministic "random" numbers the outbox policy's
//! unit tests and host tests feed to pacing and retry jitter.

/// SplitMix64 from `seed`: each call gives the next number of one fixed sequence, so a test that
/// draws many jitter values is the same on every run.
#[doc(hidden)]
pub fn seeded(mut seed: u64) -> impl FnMut() -> u64 {
    move || {
        seed = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = seed;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}
