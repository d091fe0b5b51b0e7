//! What a valid answer is: the rule a command line gives ([`Expect`]: the greeting, any 2xx,
//! or a pattern), and the check it makes of the answers to one target ([`Check`]), which
//! every load applies to every response.

use std::sync::Arc;

use greet_core::records::{self, rows_from_query, Business, World, COUNT_KEY, QUERIES_KEY};
use greet_core::{paths, WORDS};

use crate::count::ErrorKind;
use crate::message::{Header, RequestBody};

/// What a valid answer is, under load and in a light check (`--expect`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Expect {
    /// 2xx and `<word> <name>!`, the name read from the endpoint's query (`ok` from
    /// `/health`, the rows and bodies of the store-bound endpoints, any body from a file
    /// under `/static/`): the Greetings API's answer, whoever serves it.
    #[default]
    Greeting,
    /// Any 2xx.
    Any,
    /// 2xx and a body this regular expression matches.
    Pattern(String),
}

impl Expect {
    /// Its `--expect` value: none for the greeting (the default), `any`, or the pattern.
    pub fn flag(&self) -> Option<&str> {
        match self {
            Self::Greeting => None,
            Self::Any => Some("any"),
            Self::Pattern(pattern) => Some(pattern),
        }
    }
}

/// An `--expect` that is neither `any` nor a regular expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadPattern {
    /// What was given.
    pub text: String,
    /// Why the regular expression does not compile, in one line.
    pub why: String,
}

impl std::fmt::Display for BadPattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:?} is not a regular expression ({})",
            self.text, self.why
        )
    }
}

impl std::error::Error for BadPattern {}

impl std::str::FromStr for Expect {
    type Err = BadPattern;

    /// `any`, or a regular expression the body must match.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        if text == "any" {
            return Ok(Self::Any);
        }
        regex::bytes::Regex::new(text)
            .map(|_| Self::Pattern(text.to_owned()))
            .map_err(|e| {
                let why = e.to_string();
                BadPattern {
                    text: text.to_owned(),
                    why: why.lines().last().unwrap_or("invalid").trim().to_owned(),
                }
            })
    }
}

/// A check of a response: `Ok` for a valid one, or why it is not.
type CheckFn = dyn Fn(u16, &[u8]) -> Result<(), ErrorKind> + Send + Sync;

/// The check of the answers to one target: the status and body it answers with.
#[derive(Clone)]
pub struct Check(Arc<CheckFn>);

impl std::fmt::Debug for Check {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Check(..)")
    }
}

impl Check {
    /// A valid answer to `GET target` as `rule` says. The greeting (the default): `ok` from
    /// `/health`; the rows, the message or the page of the store-bound and TechEmpower routes
    /// (rows in range, not as seeded: `/updates` renumbers them); otherwise `<word> <name>!`, the name read from the query as the servers read
    /// it (`World` when there is none; a query the contract refuses gets 400s, which count as
    /// failures). Every rule wants a 2xx status.
    pub fn for_target(target: &str, rule: &Expect) -> Self {
        match rule {
            Expect::Any => Self::with(|status, body| status_and(status, body, |_| true)),
            Expect::Pattern(pattern) => {
                // A pattern is compiled when it is parsed: one that fails here came from no
                // parser, and matches nothing.
                let regex = regex::bytes::Regex::new(pattern).unwrap_or_else(|_| {
                    regex::bytes::Regex::new("$^").expect("a regex that matches nothing")
                });
                Self::with(move |status, body| {
                    status_and(status, body, |body| regex.is_match(body))
                })
            }
            Expect::Greeting => {
                let (path, query) = match target.split_once('?') {
                    Some((path, query)) => (path, Some(query)),
                    None => (target, None),
                };
                match path {
                    paths::HEALTH => {
                        return Self::with(|status, body| {
                            status_and(status, body, |body| body == b"ok")
                        })
                    }
                    paths::DB => {
                        return Self::with(|status, body| {
                            status_and(status, body, |body| {
                                json::<World>(body).is_some_and(|w| w.is_valid())
                            })
                        })
                    }
                    paths::QUERIES | paths::UPDATES | paths::CACHED_QUERIES => {
                        let key = if path == paths::CACHED_QUERIES {
                            COUNT_KEY
                        } else {
                            QUERIES_KEY
                        };
                        let n = rows_from_query(query, key);
                        return Self::with(move |status, body| {
                            status_and(status, body, |body| {
                                json::<Vec<World>>(body).is_some_and(|rows| {
                                    rows.len() == n && rows.iter().all(World::is_valid)
                                })
                            })
                        });
                    }
                    paths::JSON => return Self::exactly(br#"{"message":"Hello, World!"}"#),
                    paths::PLAINTEXT => return Self::exactly(records::HELLO.as_bytes()),
                    paths::FORTUNES => return Self::exactly(records::FORTUNES_PAGE.as_bytes()),
                    paths::BUSINESS => return Self::business(query),
                    path if path.starts_with(paths::STATIC) => {
                        return Self::with(|status, body| status_and(status, body, |_| true))
                    }
                    _ => {}
                }
                let suffix = greet_core::name::name_from_query(query)
                    .map(|name| format!(" {name}!").into_bytes())
                    .unwrap_or_default();
                Self::with(move |status, body| {
                    status_and(status, body, |body| is_greeting(body, &suffix))
                })
            }
        }
    }

    /// [`Check::for_target`] for requests that carry `headers`, and `body` as a POST. Under
    /// the greeting's rule, a POST to `/greetings` must be greeted, as JSON, by the name its
    /// body gives, and one to `/upload` counted to the body's length; a POST elsewhere needs
    /// a 2xx. With an `accept-encoding` the answers may come compressed, which the rule
    /// cannot read: the status alone is checked (a pattern still applies, to the bytes as
    /// they came).
    pub fn for_request(
        target: &str,
        headers: &[Header],
        body: Option<&RequestBody>,
        rule: &Expect,
    ) -> Self {
        let compressed = headers.iter().any(|h| h.name() == "accept-encoding");
        let path = target.split_once('?').map_or(target, |(path, _)| path);
        match (rule, body) {
            (Expect::Greeting, _) if compressed => Self::for_target(target, &Expect::Any),
            (Expect::Greeting, Some(body)) if path == paths::UPLOAD => {
                let want = body.bytes().len() as u64;
                Self::with(move |status, answer| {
                    status_and(status, answer, |answer| {
                        json::<greet_core::upload::Received>(answer)
                            .is_some_and(|r| r.bytes == want)
                    })
                })
            }
            (Expect::Greeting, Some(body)) if path == paths::GREETINGS => {
                let suffix = greet_core::post::name_from_json(&body.bytes())
                    .map(|name| format!(" {name}!"))
                    .unwrap_or_default();
                Self::with(move |status, answer| {
                    status_and(status, answer, |answer| {
                        serde_json::from_slice::<greet_core::post::Greeting<'_>>(answer)
                            .is_ok_and(|g| is_greeting(g.greeting.as_bytes(), suffix.as_bytes()))
                    })
                })
            }
            (Expect::Greeting, Some(_)) => Self::for_target(target, &Expect::Any),
            _ => Self::for_target(target, rule),
        }
    }

    /// A 2xx with exactly `want` for a body.
    fn exactly(want: &'static [u8]) -> Self {
        Self::with(move |status, body| status_and(status, body, |body| body == want))
    }

    /// `/business?<query>`: the name as the servers read it, the person's greeting, and a
    /// visit count no other answer of this load had: each visit is counted once, so the
    /// counts a load sees of one name are distinct (a repeated count is an invalid body).
    fn business(query: Option<&str>) -> Self {
        let Ok(name) = greet_core::name::name_from_query(query) else {
            // A refused name: 400s, which count as failures.
            return Self::with(|status, body| status_and(status, body, |_| false));
        };
        let seen = Arc::new(VisitLedger::default());
        Self::with(move |status, body| {
            status_and(status, body, |body| {
                json::<Business>(body)
                    .is_some_and(|b| b.greets(&name) && b.visits >= 1 && seen.first(b.visits))
            })
        })
    }

    /// Any check of a response: `Ok` for a valid one, or why it is not.
    pub fn with(
        check: impl Fn(u16, &[u8]) -> Result<(), ErrorKind> + Send + Sync + 'static,
    ) -> Self {
        Self(Arc::new(check))
    }

    /// Whether an answer of `status` and `body` is valid.
    pub fn check(&self, status: u16, body: &[u8]) -> Result<(), ErrorKind> {
        (self.0)(status, body)
    }

    /// [`Check::check`], and a valid answer's body size as it came, for the tally.
    pub(crate) fn bytes(&self, status: u16, body: &[u8]) -> Result<u64, ErrorKind> {
        self.check(status, body).map(|()| body.len() as u64)
    }
}

fn status_and(status: u16, body: &[u8], valid: impl Fn(&[u8]) -> bool) -> Result<(), ErrorKind> {
    if !(200..300).contains(&status) {
        Err(ErrorKind::Status)
    } else if valid(body) {
        Ok(())
    } else {
        Err(ErrorKind::Body)
    }
}

fn json<T: serde::de::DeserializeOwned>(body: &[u8]) -> Option<T> {
    serde_json::from_slice(body).ok()
}

/// The visit counts a load has seen, in shards so that workers on several threads seldom
/// wait for each other.
#[derive(Default)]
struct VisitLedger([std::sync::Mutex<std::collections::HashSet<u64>>; 16]);

impl VisitLedger {
    /// Records `visits`; false if it was seen before.
    fn first(&self, visits: u64) -> bool {
        let shard = &self.0[(visits % 16) as usize];
        shard
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(visits)
    }
}

/// `^(Hello|Hi|Olá|Oi|Hallo)<suffix>$`, the suffix being ` <name>!`.
pub fn is_greeting(body: &[u8], suffix: &[u8]) -> bool {
    !suffix.is_empty()
        && body
            .strip_suffix(suffix)
            .is_some_and(|word| WORDS.iter().any(|w| w.as_bytes() == word))
}

#[cfg(test)]
mod tests {
    use super::*;
    use greet_probe::http1::{self, Options, Response};

    impl Check {
        fn check_response(&self, res: &Response) -> Result<(), ErrorKind> {
            self.check(res.status(), res.body())
        }
    }

    fn response(wire: &[u8]) -> Response {
        let mut res = Response::new();
        http1::read_blocking(
            &mut &wire[..],
            &mut Vec::new(),
            &mut res,
            Options::default(),
        )
        .unwrap();
        res
    }

    /// A 200 with `body`.
    fn answer(body: &str) -> Response {
        response(
            format!(
                "HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n{body}",
                body.len()
            )
            .as_bytes(),
        )
    }

    #[test]
    fn validates_bodies_for_the_target() {
        let world = Check::for_target("/greetings", &Expect::Greeting);
        for word in WORDS {
            assert_eq!(
                world.check_response(&answer(&format!("{word} World!"))),
                Ok(())
            );
        }
        for bad in [
            "Hello Ana!",
            "Hey World!",
            "Hello World!\n",
            "",
            "Hello World",
        ] {
            assert_eq!(
                world.check_response(&answer(bad)),
                Err(ErrorKind::Body),
                "{bad}"
            );
        }
        let ana = Check::for_target("/greetings?name=Ana&x=1", &Expect::Greeting);
        assert_eq!(ana.check_response(&answer("Oi Ana!")), Ok(()));
        assert_eq!(
            ana.check_response(&answer("Oi World!")),
            Err(ErrorKind::Body)
        );
        let joao = Check::for_target("/greetings/blocking?name=Jo%C3%A3o", &Expect::Greeting);
        assert_eq!(joao.check_response(&answer("Hallo João!")), Ok(()));
        assert_eq!(
            Check::for_target("/health", &Expect::Greeting).check_response(&answer("ok")),
            Ok(())
        );
        let refused = response(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n");
        let any = Check::for_target("/x", &Expect::Any);
        assert_eq!(any.check_response(&answer("anything")), Ok(()));
        assert_eq!(any.check_response(&refused), Err(ErrorKind::Status));
        let pattern = Check::for_target("/x", &Expect::Pattern("^Ol. ".into()));
        assert_eq!(pattern.check_response(&answer("Olá Ana!")), Ok(()));
        assert_eq!(
            pattern.check_response(&answer("Hi Ana!")),
            Err(ErrorKind::Body)
        );
        assert_eq!(
            Check::for_target("/greetings?name=%ZZ", &Expect::Greeting).check_response(&refused),
            Err(ErrorKind::Status)
        );
    }

    #[test]
    fn validates_the_store_bound_answers() {
        let rule = &Expect::Greeting;
        let row = |id: i32| {
            format!(
                r#"{{"id":{id},"randomNumber":{}}}"#,
                greet_core::records::world_number(id)
            )
        };
        let db = Check::for_target("/db", rule);
        assert_eq!(db.check_response(&answer(&row(17))), Ok(()));
        // A renumbered row is a row (`/updates` renumbers them); one out of range is not.
        let renumbered = format!(
            r#"{{"id":17,"randomNumber":{}}}"#,
            greet_core::records::world_number(17) % 10_000 + 1
        );
        assert_eq!(db.check_response(&answer(&renumbered)), Ok(()));
        for bad in [
            r#"{"id":17,"randomNumber":10001}"#,
            r#"{"id":17,"randomNumber":0}"#,
            r#"{"id":0,"randomNumber":1}"#,
            "[]",
            "ok",
            r#"{"id":17}"#,
        ] {
            assert_eq!(
                db.check_response(&answer(bad)),
                Err(ErrorKind::Body),
                "{bad}"
            );
        }
        let three = Check::for_target("/queries?queries=3", rule);
        assert_eq!(
            three.check_response(&answer(&format!("[{},{},{}]", row(1), row(2), row(10_000)))),
            Ok(())
        );
        assert_eq!(
            three.check_response(&answer(&format!("[{},{}]", row(1), row(2)))),
            Err(ErrorKind::Body)
        );
        let one = Check::for_target("/queries?queries=x", rule);
        assert_eq!(
            one.check_response(&answer(&format!("[{}]", row(5)))),
            Ok(())
        );

        for (target, n) in [("/updates?queries=2", 2), ("/cached-queries?count=2", 2)] {
            let check = Check::for_target(target, rule);
            let two = answer(&format!("[{},{}]", row(1), row(2)));
            assert_eq!(check.check_response(&two), Ok(()), "{target}");
            let one = answer(&format!("[{}]", row(1)));
            assert_eq!(
                check.check_response(&one),
                Err(ErrorKind::Body),
                "{target}: {n}"
            );
        }
        // `count`, not `queries`, sizes /cached-queries.
        let cached = Check::for_target("/cached-queries?queries=2", rule);
        assert_eq!(
            cached.check_response(&answer(&format!("[{}]", row(1)))),
            Ok(())
        );
        for (target, good, bad) in [
            (
                "/json",
                r#"{"message":"Hello, World!"}"#,
                r#"{"message":"Hello"}"#,
            ),
            ("/plaintext", "Hello, World!", "Hello, World!\n"),
            (
                "/fortunes",
                greet_core::records::FORTUNES_PAGE,
                "<table></table>",
            ),
        ] {
            let check = Check::for_target(target, rule);
            assert_eq!(check.check_response(&answer(good)), Ok(()), "{target}");
            assert_eq!(
                check.check_response(&answer(bad)),
                Err(ErrorKind::Body),
                "{target}"
            );
        }

        let word = greet_core::records::person_word(42);
        let other = WORDS.iter().find(|w| **w != word).unwrap();
        let business = |greeting: &str, visits: u64| {
            answer(&format!(
                r#"{{"name":"user-00042","greeting":"{greeting}","visits":{visits}}}"#
            ))
        };
        let known = Check::for_target("/business?name=user-00042", rule);
        assert_eq!(
            known.check_response(&business(&format!("{word} user-00042!"), 1)),
            Ok(())
        );
        assert_eq!(
            known.check_response(&business(&format!("{word} user-00042!"), 3)),
            Ok(())
        );
        // The same count twice: a visit counted once for two answers.
        assert_eq!(
            known.check_response(&business(&format!("{word} user-00042!"), 3)),
            Err(ErrorKind::Body)
        );
        assert_eq!(
            known.check_response(&business(&format!("{other} user-00042!"), 4)),
            Err(ErrorKind::Body)
        );
        assert_eq!(
            known.check_response(&business(&format!("{word} user-00042!"), 0)),
            Err(ErrorKind::Body)
        );
        let ana = Check::for_target("/business?name=Ana", rule);
        let body = format!(r#"{{"name":"Ana","greeting":"{other} Ana!","visits":1}}"#);
        assert_eq!(ana.check_response(&answer(&body)), Ok(()));
        let bad = Check::for_target("/business?name=%ZZ", rule);
        assert_eq!(bad.check_response(&answer("{}")), Err(ErrorKind::Body));
    }

    #[test]
    fn an_expect_flag_reads_back_as_it_was_given() {
        assert_eq!("any".parse(), Ok(Expect::Any));
        assert_eq!("^Hi".parse(), Ok(Expect::Pattern("^Hi".into())));
        let bad = "(".parse::<Expect>().unwrap_err().to_string();
        assert!(
            bad.starts_with("\"(\" is not a regular expression ("),
            "{bad}"
        );
        assert!(!bad.contains('\n'), "{bad}");
        for rule in [
            Expect::Greeting,
            Expect::Any,
            Expect::Pattern("^Ol. ".into()),
        ] {
            let back = rule.flag().map_or(Ok(Expect::Greeting), str::parse);
            assert_eq!(back, Ok(rule));
        }
    }
}
