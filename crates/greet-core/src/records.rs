//! What the store-bound endpoints and TechEmpower's tests answer, as data: the JSON bodies
//! ([`World`], [`Business`], [`Message`]), the seed rows they are read from (a function of
//! their key, and TechEmpower's twelve [`FORTUNES`]), the one valid fortunes page,
//! TechEmpower's `?queries=N` rule, and what a valid answer is. Shared by the stores that read them, the handlers that
//! send them, and every client that checks them (the contract suite, the load generator), so
//! that checking an answer needs no database client.
//!
//! The rows are a function of their key (a fixed hash, not a random generator): seeding is
//! idempotent, several servers seeding one database at once write the same rows, and a test
//! on a fresh database can tell a seeded row from any other without reading the database
//! (once `/updates` has renumbered rows, a client can only check that they are in range).

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use crate::WORDS;

/// Rows of `world`: ids `1..=WORLD_ROWS`.
pub const WORLD_ROWS: i32 = 10_000;
/// Known people of `/business`: `user-00001..=user-10000`.
pub const PEOPLE: u32 = 10_000;
/// Most rows one `/queries`, `/updates` or `/cached-queries` request reads (TechEmpower's
/// bound).
pub const MAX_QUERIES: usize = 500;
/// The query parameter of `/queries` and `/updates`.
pub const QUERIES_KEY: &str = "queries";
/// The query parameter of `/cached-queries` (the name TechEmpower's own entries give it).
pub const COUNT_KEY: &str = "count";
/// The body of `/plaintext` and the message of `/json`.
pub const HELLO: &str = "Hello, World!";

/// The body of `/json`: `{"message":"Hello, World!"}`, serialized per request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message<'a> {
    /// [`HELLO`].
    #[serde(borrow)]
    pub message: Cow<'a, str>,
}

impl Message<'static> {
    /// The one message `/json` sends.
    pub const fn hello() -> Self {
        Self {
            message: Cow::Borrowed(HELLO),
        }
    }
}

/// A row of `fortune`, or the one `/fortunes` adds at request time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fortune {
    /// `1..=12` as seeded; `0` for the added row.
    pub id: i32,
    /// The text, as stored: HTML-escaping is the page's.
    pub message: String,
}

/// TechEmpower's `fortune` table, as seeded: one row holds a `<script>` tag (the page must
/// escape it) and one is Japanese (the page must keep its UTF-8 intact).
pub const FORTUNES: [(i32, &str); 12] = [
    (1, "fortune: No such file or directory"),
    (
        2,
        "A computer scientist is someone who fixes things that aren't broken.",
    ),
    (3, "After enough decimal places, nobody gives a damn."),
    (
        4,
        "A bad random number generator: 1, 1, 1, 1, 1, 4.33e+67, 1, 1, 1",
    ),
    (
        5,
        "A computer program does what you tell it to do, not what you want it to do.",
    ),
    (
        6,
        "Emacs is a nice operating system, but I prefer UNIX. — Tom Christaensen",
    ),
    (7, "Any program that runs right is obsolete."),
    (
        8,
        "A list is only as strong as its weakest link. — Donald Knuth",
    ),
    (9, "Feature: A bug with seniority."),
    (10, "Computers make very fast, very accurate mistakes."),
    (
        11,
        "<script>alert(\"This should not be displayed in a browser alert box.\");</script>",
    ),
    (12, "フレームワークのベンチマーク"),
];

/// The row `/fortunes` adds to those it reads, before sorting.
pub const ADDED_FORTUNE: (i32, &str) = (0, "Additional fortune added at request time.");

/// The one valid answer of `/fortunes`, byte for byte: the rows and the added one sorted by
/// message (UTF-8 byte order), each message HTML-escaped. Written out by hand, not rendered,
/// so that a client checks the servers' template against something it did not produce.
pub const FORTUNES_PAGE: &str = concat!(
    "<!DOCTYPE html><html><head><title>Fortunes</title></head><body><table>",
    "<tr><th>id</th><th>message</th></tr>",
    "<tr><td>11</td><td>&#60;script&#62;alert(&#34;This should not be displayed in a browser alert box.&#34;);&#60;/script&#62;</td></tr>",
    "<tr><td>4</td><td>A bad random number generator: 1, 1, 1, 1, 1, 4.33e+67, 1, 1, 1</td></tr>",
    "<tr><td>5</td><td>A computer program does what you tell it to do, not what you want it to do.</td></tr>",
    "<tr><td>2</td><td>A computer scientist is someone who fixes things that aren&#39;t broken.</td></tr>",
    "<tr><td>8</td><td>A list is only as strong as its weakest link. — Donald Knuth</td></tr>",
    "<tr><td>0</td><td>Additional fortune added at request time.</td></tr>",
    "<tr><td>3</td><td>After enough decimal places, nobody gives a damn.</td></tr>",
    "<tr><td>7</td><td>Any program that runs right is obsolete.</td></tr>",
    "<tr><td>10</td><td>Computers make very fast, very accurate mistakes.</td></tr>",
    "<tr><td>6</td><td>Emacs is a nice operating system, but I prefer UNIX. — Tom Christaensen</td></tr>",
    "<tr><td>9</td><td>Feature: A bug with seniority.</td></tr>",
    "<tr><td>1</td><td>fortune: No such file or directory</td></tr>",
    "<tr><td>12</td><td>フレームワークのベンチマーク</td></tr>",
    "</table></body></html>",
);

/// A row of `world`, as `/db` and `/queries` send it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct World {
    /// `1..=10000`.
    pub id: i32,
    /// `1..=10000`.
    #[serde(rename = "randomNumber")]
    pub random_number: i32,
}

impl World {
    /// Whether this is a row as seeded: id in range, and the number the seed gives it.
    pub fn is_seeded(&self) -> bool {
        (1..=WORLD_ROWS).contains(&self.id) && self.random_number == world_number(self.id)
    }

    /// Whether this can be a row of `world`: id and number both in `1..=10000`. What a
    /// client can check once `/updates` has given rows new numbers.
    pub fn is_valid(&self) -> bool {
        (1..=WORLD_ROWS).contains(&self.id) && (1..=WORLD_ROWS).contains(&self.random_number)
    }
}

/// The body of `/business`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Business {
    /// The name, as `/greetings` reads it.
    pub name: String,
    /// `"<word> <name>!"`: the person's stored word, or a random one for an unknown name.
    pub greeting: String,
    /// Visits of this name so far, this one included.
    pub visits: u64,
}

impl Business {
    /// Whether this answers `name`: the name itself, and a greeting of the person's stored word
    /// (a known person) or of any of the five words (anyone else).
    pub fn greets(&self, name: &str) -> bool {
        let Some(word) = self
            .greeting
            .strip_suffix('!')
            .and_then(|g| g.strip_suffix(name))
            .and_then(|g| g.strip_suffix(' '))
        else {
            return false;
        };
        self.name == name
            && match person_index(name) {
                Some(i) => word == person_word(i),
                None => WORDS.contains(&word),
            }
    }
}

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

/// TechEmpower's rule for `?queries=N` (`key` is [`QUERIES_KEY`] or [`COUNT_KEY`]): missing,
/// empty or not an integer → 1; below 1 → 1; above [`MAX_QUERIES`] → 500. The last such
/// parameter wins.
pub fn rows_from_query(query: Option<&str>, key: &str) -> usize {
    let value = query
        .into_iter()
        .flat_map(|q| q.split('&'))
        .filter_map(|pair| pair.strip_prefix(key)?.strip_prefix('='))
        .next_back();
    let Some(value) = value else { return 1 };
    let (negative, digits) = match value.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, value.strip_prefix('+').unwrap_or(value)),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) || negative {
        return 1;
    }
    // All digits: a number too large for usize is above the bound too.
    digits
        .parse::<usize>()
        .map_or(MAX_QUERIES, |n| n.clamp(1, MAX_QUERIES))
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

    #[test]
    fn queries_follow_techempower() {
        for (query, n) in [
            (None, 1),
            (Some(""), 1),
            (Some("queries="), 1),
            (Some("queries=foo"), 1),
            (Some("queries=0"), 1),
            (Some("queries=-5"), 1),
            (Some("queries=7"), 7),
            (Some("queries=+7"), 7),
            (Some("queries=500"), 500),
            (Some("queries=501"), 500),
            (Some("queries=99999999999999999999999"), 500),
            (Some("queries=2.5"), 1),
            (Some("x=1&queries=20"), 20),
            (Some("queries=3&queries=9"), 9),
            (Some("myqueries=9"), 1),
        ] {
            assert_eq!(rows_from_query(query, QUERIES_KEY), n, "{query:?}");
            let count = query.map(|q| q.replace("queries", COUNT_KEY));
            assert_eq!(rows_from_query(count.as_deref(), COUNT_KEY), n, "{count:?}");
        }
        assert_eq!(rows_from_query(Some("queries=7"), COUNT_KEY), 1);
    }

    #[test]
    fn the_fortunes_page_is_the_rows_sorted_and_escaped() {
        // An escaper of its own, independent of the page written out above: the five
        // characters HTML gives meaning to, as numeric references.
        let escape = |s: &str| {
            s.replace('&', "&#38;")
                .replace('<', "&#60;")
                .replace('>', "&#62;")
                .replace('"', "&#34;")
                .replace('\'', "&#39;")
        };
        let mut rows: Vec<(i32, &str)> = FORTUNES.to_vec();
        rows.push(ADDED_FORTUNE);
        rows.sort_by(|a, b| a.1.cmp(b.1));
        let body: String = rows
            .iter()
            .map(|(id, m)| format!("<tr><td>{id}</td><td>{}</td></tr>", escape(m)))
            .collect();
        let page = format!(
            "<!DOCTYPE html><html><head><title>Fortunes</title></head><body><table>\
             <tr><th>id</th><th>message</th></tr>{body}</table></body></html>"
        );
        assert_eq!(page, FORTUNES_PAGE);
        assert_eq!(
            serde_json::to_string(&Message::hello()).unwrap(),
            r#"{"message":"Hello, World!"}"#
        );
    }

    #[test]
    fn a_business_answer_greets_its_person() {
        let word = person_word(42);
        let other = WORDS.iter().find(|w| **w != word).unwrap();
        let answer = |greeting: String| Business {
            name: "user-00042".into(),
            greeting,
            visits: 1,
        };
        assert!(answer(format!("{word} user-00042!")).greets("user-00042"));
        assert!(!answer(format!("{other} user-00042!")).greets("user-00042"));
        assert!(!answer(format!("{word} user-00042!")).greets("user-00043"));
        let ana = Business {
            name: "Ana".into(),
            greeting: format!("{other} Ana!"),
            visits: 1,
        };
        assert!(ana.greets("Ana") && !ana.greets("Bo"));
    }
}
