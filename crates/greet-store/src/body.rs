//! The JSON bodies the store-bound endpoints send, and what makes one valid: shared by the
//! databases that read them, the handlers that send them and the clients that check them.

use greet_core::WORDS;
use serde::{Deserialize, Serialize};

use crate::seed;

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
        (1..=seed::WORLD_ROWS).contains(&self.id)
            && self.random_number == seed::world_number(self.id)
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
            && match seed::person_index(name) {
                Some(i) => word == seed::person_word(i),
                None => WORDS.contains(&word),
            }
    }
}
