//! `POST /greetings`: a JSON body, `{"name":"Ana"}`, answered with `{"greeting":"Olá Ana!"}`
//! after the same delay as `GET`. The rules, in the order every server applies them:
//!
//! 1. the `content-type` is JSON (`application/json` or `application/<anything>+json`, with
//!    any parameters), else 415: a body that is not JSON is refused whatever its size;
//! 2. the body is at most [`MAX_BODY_BYTES`], else 413: a declared length over it is refused
//!    before the body is read, an undeclared one as soon as it crosses it (that is each
//!    server's own limited body reader, which hands the bytes here);
//! 3. it is JSON, else 400 ([`GreetError::BadJson`]), and an object with a string `name`,
//!    else 400 ([`GreetError::NoName`]); other fields are ignored;
//! 4. the name follows the query's rules ([`crate::name::checked`]): empty is
//!    [`crate::name::DEFAULT_NAME`], too long or with a control character is 400.
//!
//! What is JSON and what a name is are this module's, so that the three servers answer every
//! body alike; the frameworks' own JSON extractors differ in their rejections (axum answers a
//! missing field with 422).

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use crate::{GreetError, Reply};

/// [`MAX_BODY_BYTES`] as a literal, for the message that quotes it.
macro_rules! max_body_bytes {
    () => {
        65536
    };
}
pub(crate) use max_body_bytes;

/// The largest body `POST /greetings` reads: 64 KiB.
pub const MAX_BODY_BYTES: usize = max_body_bytes!();

/// Whether `content_type` (a `content-type` header's value) names JSON.
pub fn is_json(content_type: &[u8]) -> bool {
    let Some((kind, subtype)) = crate::media_type(content_type) else {
        return false;
    };
    let suffix = b"+json";
    kind.eq_ignore_ascii_case(b"application")
        && (subtype.eq_ignore_ascii_case(b"json")
            || (subtype.len() > suffix.len()
                && subtype[subtype.len() - suffix.len()..].eq_ignore_ascii_case(suffix)))
}

/// Rules 1 and 2 on the head, before the body is read: a JSON `content-type`, or
/// [`GreetError::UnsupportedMediaType`]; then a `declared` length (the body's content length,
/// 0 when none is declared) within [`MAX_BODY_BYTES`], or [`GreetError::BodyTooLarge`].
pub fn admit(content_type: Option<&[u8]>, declared: u64) -> Result<(), GreetError> {
    match content_type {
        Some(ct) if is_json(ct) => {}
        _ => return Err(GreetError::UnsupportedMediaType),
    }
    if declared > MAX_BODY_BYTES as u64 {
        return Err(GreetError::BodyTooLarge);
    }
    Ok(())
}

#[derive(Deserialize)]
struct Body<'a> {
    #[serde(borrow)]
    name: Cow<'a, str>,
}

/// Rules 2 to 4 on a body read whole: the name it gives.
pub fn name_from_json(body: &[u8]) -> Result<Cow<'static, str>, GreetError> {
    if body.len() > MAX_BODY_BYTES {
        return Err(GreetError::BodyTooLarge);
    }
    // serde reads a struct from an array as well (`["Ana"]`): only an object is one.
    if body.trim_ascii_start().first() != Some(&b'{') {
        return Err(
            match serde_json::from_slice::<serde::de::IgnoredAny>(body) {
                Ok(_) => GreetError::NoName,
                Err(_) => GreetError::BadJson,
            },
        );
    }
    match serde_json::from_slice::<Body<'_>>(body) {
        Ok(Body { name }) => crate::name::checked(name),
        Err(err) if err.is_data() => Err(GreetError::NoName),
        Err(_) => Err(GreetError::BadJson),
    }
}

/// The answer's body: `{"greeting":"<word> <name>!"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Greeting<'a> {
    /// The greeting, as `GET /greetings` says it.
    #[serde(borrow)]
    pub greeting: Cow<'a, str>,
}

/// A 200 with `greeting` as JSON.
pub fn reply(greeting: String) -> Reply {
    let body = Greeting {
        greeting: Cow::Owned(greeting),
    };
    // Serializing a struct of one string cannot fail.
    Reply::json(serde_json::to_string(&body).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_is_application_json_or_a_json_suffix() {
        for ct in [
            "application/json",
            "Application/JSON",
            "application/json; charset=utf-8",
            " application/json ;charset=UTF-8",
            "application/merge-patch+json",
            "application/vnd.api+JSON",
        ] {
            assert!(is_json(ct.as_bytes()), "{ct}");
        }
        for ct in [
            "",
            "text/plain",
            "text/json",
            "application/x-www-form-urlencoded",
            "application/+json",
            "application",
            "application/jsonp",
            "multipart/form-data; boundary=json",
            "json",
        ] {
            assert!(!is_json(ct.as_bytes()), "{ct}");
        }
        assert_eq!(admit(None, 0), Err(GreetError::UnsupportedMediaType));
        // The content type first: a body too large and not JSON is refused as not JSON.
        let over = MAX_BODY_BYTES as u64 + 1;
        assert_eq!(
            admit(Some(b"text/plain"), over),
            Err(GreetError::UnsupportedMediaType)
        );
        assert_eq!(
            admit(Some(b"application/json"), over),
            Err(GreetError::BodyTooLarge)
        );
        assert_eq!(admit(Some(b"application/json"), over - 1), Ok(()));
    }

    #[test]
    fn a_body_gives_its_name_or_says_what_is_wrong() {
        let name = |body: &str| name_from_json(body.as_bytes());
        assert_eq!(name(r#"{"name":"Ana"}"#).as_deref(), Ok("Ana"));
        assert_eq!(
            name(" {\"id\":7,\"name\":\"Jo\\u00e3o\"} \n").as_deref(),
            Ok("João")
        );
        assert_eq!(name(r#"{"name":""}"#).as_deref(), Ok("World"));
        for bad in [
            "",
            "{",
            r#"{"name":"Ana"} x"#,
            "nope",
            "\u{feff}{}",
            r#"{"name":"a\x"}"#,
        ] {
            assert_eq!(name(bad), Err(GreetError::BadJson), "{bad:?}");
        }
        for no_name in [
            "{}",
            "[]",
            r#"["Ana"]"#,
            "null",
            "7",
            r#"{"name":7}"#,
            r#"{"name":null}"#,
            r#"{"Name":"Ana"}"#,
        ] {
            assert_eq!(name(no_name), Err(GreetError::NoName), "{no_name:?}");
        }
        assert_eq!(
            name(r#"{"name":"a\u0000b"}"#),
            Err(GreetError::ControlCharacter)
        );
        let long = format!(
            r#"{{"name":"{}"}}"#,
            "é".repeat(crate::name::MAX_NAME_CHARS + 1)
        );
        assert_eq!(name(&long), Err(GreetError::NameTooLong));
        let big = format!(r#"{{"name":"Ana","pad":"{}"}}"#, " ".repeat(MAX_BODY_BYTES));
        assert_eq!(name(&big), Err(GreetError::BodyTooLarge));
        assert_eq!(
            name_from_json(b"{\"name\":\"\xff\"}"),
            Err(GreetError::BadJson)
        );
    }

    #[test]
    fn the_answer_is_the_greeting_as_json() {
        let reply = reply("Olá Ana!".to_owned());
        assert_eq!(
            (reply.status, reply.content_type),
            (200, crate::JSON_CONTENT_TYPE)
        );
        assert_eq!(reply.body, r#"{"greeting":"Olá Ana!"}"#);
    }
}
