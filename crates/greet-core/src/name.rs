//! The query → name rules, as Spring's `@RequestParam(defaultValue = "World") String name`
//! applies them to a form-urlencoded query string.

use std::borrow::Cow;

use crate::GreetError;

/// The name used when the query has none, or an empty one.
pub const DEFAULT_NAME: &str = "World";
/// [`MAX_NAME_CHARS`] as a literal, for the messages that quote it (`concat!` takes only
/// literals).
macro_rules! max_name_chars {
    () => {
        256
    };
}
pub(crate) use max_name_chars;

/// Longest accepted name, in characters (Unicode scalar values), after decoding and joining.
pub const MAX_NAME_CHARS: usize = max_name_chars!();

/// Extracts the name from a raw query string (the part after `?`, not decoded).
///
/// - pairs are split on `&`, key from value on the first `=`; `+` is a space and `%XX` a
///   byte, in keys and values alike (form-urlencoded);
/// - every `name` value counts, joined with `,` in order (`name=a&name=b` → `a,b`);
/// - no `name`, or an empty one, gives [`DEFAULT_NAME`];
/// - other parameters are ignored, even when their encoding is broken;
/// - a bad `%` escape or non-UTF-8 bytes in a name value, a name over [`MAX_NAME_CHARS`]
///   characters or one with a control character is an error (400).
pub fn name_from_query(query: Option<&str>) -> Result<Cow<'static, str>, GreetError> {
    let mut name: Option<String> = None;
    for pair in query.unwrap_or("").split('&') {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        if !matches!(decode(key).as_deref(), Ok("name")) {
            continue;
        }
        let value = decode(value)?;
        match &mut name {
            None => name = Some(value.into_owned()),
            Some(joined) => {
                joined.push(',');
                joined.push_str(&value);
            }
        }
        // A query is bounded by the request-target limit, but stop as soon as the
        // answer is known rather than join thousands of values.
        if name.as_ref().is_some_and(|n| n.len() > 4 * MAX_NAME_CHARS) {
            return Err(GreetError::NameTooLong);
        }
    }
    match name {
        None => Ok(Cow::Borrowed(DEFAULT_NAME)),
        Some(name) if name.is_empty() => Ok(Cow::Borrowed(DEFAULT_NAME)),
        Some(name) => validate(name).map(Cow::Owned),
    }
}

/// A name given whole rather than in a query (`POST /greetings`' JSON): empty is
/// [`DEFAULT_NAME`]; over [`MAX_NAME_CHARS`] characters or with a control character, an error.
pub fn checked(name: Cow<'_, str>) -> Result<Cow<'static, str>, GreetError> {
    if name.is_empty() {
        return Ok(Cow::Borrowed(DEFAULT_NAME));
    }
    validate(name.into_owned()).map(Cow::Owned)
}

fn validate(name: String) -> Result<String, GreetError> {
    let mut chars = 0usize;
    for c in name.chars() {
        if c.is_control() {
            return Err(GreetError::ControlCharacter);
        }
        chars += 1;
    }
    if chars > MAX_NAME_CHARS {
        return Err(GreetError::NameTooLong);
    }
    Ok(name)
}

/// Strict form-urlencoded decoding of one key or value.
fn decode(raw: &str) -> Result<Cow<'_, str>, GreetError> {
    if !raw.bytes().any(|b| b == b'%' || b == b'+') {
        return Ok(Cow::Borrowed(raw));
    }
    let mut out = Vec::with_capacity(raw.len());
    let mut bytes = raw.bytes();
    while let Some(b) = bytes.next() {
        match b {
            b'+' => out.push(b' '),
            b'%' => {
                let hi = bytes.next().and_then(hex);
                let lo = bytes.next().and_then(hex);
                match (hi, lo) {
                    (Some(hi), Some(lo)) => out.push(hi << 4 | lo),
                    _ => return Err(GreetError::BadPercentEncoding),
                }
            }
            b => out.push(b),
        }
    }
    String::from_utf8(out)
        .map(Cow::Owned)
        .map_err(|_| GreetError::NotUtf8)
}

fn hex(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(q: &str) -> Result<Cow<'static, str>, GreetError> {
        name_from_query(Some(q))
    }

    #[test]
    fn default_when_absent_or_empty() {
        assert_eq!(name_from_query(None).unwrap(), "World");
        assert_eq!(name("").unwrap(), "World");
        assert_eq!(name("name=").unwrap(), "World");
        assert_eq!(name("name").unwrap(), "World");
        assert_eq!(name("other=x").unwrap(), "World");
    }

    #[test]
    fn decodes_form_urlencoding() {
        assert_eq!(name("name=Ana").unwrap(), "Ana");
        assert_eq!(name("name=Jo%C3%A3o").unwrap(), "João");
        assert_eq!(name("name=a+b").unwrap(), "a b");
        assert_eq!(name("name=a%2Bb%26c").unwrap(), "a+b&c");
        assert_eq!(name("na%6De=encoded+key").unwrap(), "encoded key");
        assert_eq!(name("name=x=y").unwrap(), "x=y");
    }

    #[test]
    fn joins_repeated_values_and_ignores_others() {
        assert_eq!(name("name=a&name=b").unwrap(), "a,b");
        assert_eq!(name("x=%ZZ&name=a&y=1&name=b&name=c").unwrap(), "a,b,c");
        assert_eq!(name("name=&name=b").unwrap(), ",b");
    }

    #[test]
    fn rejects_bad_encoding() {
        assert_eq!(name("name=%ZZ"), Err(GreetError::BadPercentEncoding));
        assert_eq!(name("name=%4"), Err(GreetError::BadPercentEncoding));
        assert_eq!(name("name=abc%"), Err(GreetError::BadPercentEncoding));
        assert_eq!(name("name=%FF"), Err(GreetError::NotUtf8));
        assert_eq!(name("name=%C3"), Err(GreetError::NotUtf8));
    }

    #[test]
    fn enforces_length_in_characters() {
        let ok = "ã".repeat(MAX_NAME_CHARS);
        assert_eq!(name(&format!("name={ok}")).unwrap(), ok);
        let long = "a".repeat(MAX_NAME_CHARS + 1);
        assert_eq!(name(&format!("name={long}")), Err(GreetError::NameTooLong));
        let many = "name=aaaa&".repeat(2000);
        assert_eq!(name(&many), Err(GreetError::NameTooLong));
    }

    #[test]
    fn rejects_control_characters() {
        for q in [
            "name=a%00b",
            "name=%0A",
            "name=%7F",
            "name=%C2%85",
            "name=\t",
        ] {
            assert_eq!(name(q), Err(GreetError::ControlCharacter), "{q}");
        }
    }

    mod properties {
        use super::super::*;
        use proptest::prelude::*;

        /// Form-urlencodes `text` the way a browser does (space as `+`, the rest `%XX`).
        fn encode(text: &str) -> String {
            text.bytes()
                .map(|b| match b {
                    b' ' => "+".to_owned(),
                    b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'*' => {
                        (b as char).to_string()
                    }
                    _ => format!("%{b:02X}"),
                })
                .collect()
        }

        proptest! {
            /// Whatever the query, the answer is a valid name or a 400, never a panic.
            #[test]
            fn any_query_gives_a_valid_name_or_a_400(query in ".{0,600}") {
                match name_from_query(Some(&query)) {
                    Ok(name) => {
                        prop_assert!(!name.is_empty());
                        prop_assert!(name.chars().count() <= MAX_NAME_CHARS);
                        prop_assert!(!name.chars().any(char::is_control));
                    }
                    Err(err) => prop_assert_eq!(err.status(), 400),
                }
            }

            /// Any name without control characters survives encoding and decoding whole.
            #[test]
            fn encoded_names_decode_to_themselves(name in "[^\\p{Cc}]{1,256}") {
                let query = format!("x=1&name={}&y=%ZZ", encode(&name));
                prop_assert_eq!(name_from_query(Some(&query)).unwrap(), name);
            }

            /// Repeated values join with commas, in order.
            #[test]
            fn repeated_names_join_in_order(parts in proptest::collection::vec("[a-z]{1,8}", 1..6)) {
                let query: Vec<_> = parts.iter().map(|p| format!("name={p}")).collect();
                prop_assert_eq!(name_from_query(Some(&query.join("&"))).unwrap(), parts.join(","));
            }

            /// Arbitrary bytes, percent-encoded: a name exactly when they are UTF-8 without
            /// control characters and short enough.
            #[test]
            fn arbitrary_bytes_decode_only_when_valid(bytes in proptest::collection::vec(any::<u8>(), 1..300)) {
                let query = format!("name={}", bytes.iter().map(|b| format!("%{b:02X}")).collect::<String>());
                let expected = match String::from_utf8(bytes) {
                    Err(_) => Err(GreetError::NotUtf8),
                    Ok(text) if text.chars().any(char::is_control) => Err(GreetError::ControlCharacter),
                    Ok(text) if text.chars().count() > MAX_NAME_CHARS => Err(GreetError::NameTooLong),
                    Ok(text) => Ok(text),
                };
                prop_assert_eq!(name_from_query(Some(&query)).map(|n| n.into_owned()), expected);
            }
        }
    }
}
