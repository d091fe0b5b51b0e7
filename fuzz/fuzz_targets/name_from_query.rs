//! Fuzzes greet-core's query → name function with arbitrary query strings: it must never
//! panic, and whatever it accepts must be a name the contract allows.

#![no_main]

use greet_core::name::{name_from_query, MAX_NAME_CHARS};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // Servers hand the function the raw query as text; a URI is ASCII, but take any UTF-8.
    let Ok(query) = std::str::from_utf8(data) else {
        return;
    };
    match name_from_query(Some(query)) {
        Ok(name) => {
            assert!(!name.is_empty());
            assert!(name.chars().count() <= MAX_NAME_CHARS);
            assert!(!name.chars().any(char::is_control));
        }
        Err(err) => assert_eq!(err.status(), 400),
    }
});
