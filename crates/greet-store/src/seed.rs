//! The schema and the seed rows, one definition for every database.
//!
//! The rows are a function of their key (a fixed hash, not a random generator), so seeding is
//! idempotent and several servers seeding one database at once write the same rows: each
//! inserts what is missing (`ON CONFLICT DO NOTHING`).

use greet_core::WORDS;

/// The tables, on SQLite (when the database is made) and PostgreSQL (at start-up) alike.
pub const SCHEMA: &str = include_str!("../schema.sql");

/// Rows of `world`: ids `1..=WORLD_ROWS`.
pub const WORLD_ROWS: i32 = 10_000;
/// Known people of `/business`: `user-00001..=user-10000`.
pub const PEOPLE: u32 = 10_000;

/// `randomNumber` of world row `id`: in `1..=10000`, as TechEmpower's.
pub fn world_number(id: i32) -> i32 {
    (mix(id as u64) % 10_000) as i32 + 1
}

/// The name of known person `i` (`1..=PEOPLE`).
pub fn person_name(i: u32) -> String {
    format!("user-{i:05}")
}

/// Which known person `name` is, if any: `user-00042` → 42.
pub fn person_index(name: &str) -> Option<u32> {
    let digits = name.strip_prefix("user-")?;
    if digits.len() != 5 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let i: u32 = digits.parse().ok()?;
    (1..=PEOPLE).contains(&i).then_some(i)
}

/// The greeting word stored for known person `i`.
pub fn person_word(i: u32) -> &'static str {
    WORDS[(mix(u64::from(i) ^ 0x5eed) % WORDS.len() as u64) as usize]
}

/// splitmix64's finaliser: a fixed, well-spread hash of the key.
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn rows_are_in_range_and_spread() {
        let numbers: HashSet<i32> = (1..=WORLD_ROWS).map(world_number).collect();
        assert!(numbers.iter().all(|n| (1..=10_000).contains(n)));
        // 10,000 draws from 10,000 values cover about 63% of them.
        assert!(numbers.len() > 6_000, "{}", numbers.len());
        let words: HashSet<&str> = (1..=PEOPLE).map(person_word).collect();
        assert_eq!(words.len(), WORDS.len());
        assert_eq!(person_name(7), "user-00007");
        assert_eq!(person_name(PEOPLE), "user-10000");
        assert_eq!(person_index("user-00042"), Some(42));
        for other in ["user-0042", "user-00000", "user-10001", "user-+0042", "Ana"] {
            assert_eq!(person_index(other), None, "{other}");
        }
    }
}
