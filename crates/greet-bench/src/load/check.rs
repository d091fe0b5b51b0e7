//! Checking: what a valid answer is for each target ([`Expect`]).

use std::sync::Arc;

use greet_core::{paths, WORDS};
use greet_store::{Business, World};

use crate::plan;

use super::count::ErrorKind;

/// A check of a response: `Ok` for a valid one, or why it is not.
type Check = dyn Fn(u16, &[u8]) -> Result<(), ErrorKind> + Send + Sync;

/// What a valid response is: the status and body a path answers with.
#[derive(Clone)]
pub struct Expect(Arc<Check>);

impl std::fmt::Debug for Expect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Expect(..)")
    }
}

impl Expect {
    /// A valid answer to `GET target` as `rule` says. The greeting (the default): `ok` from
    /// `/health`; otherwise `<word> <name>!`, the name read from the query as the servers read
    /// it (`World` when there is none; a query the contract refuses gets 400s, which count as
    /// failures). Every rule wants a 2xx status.
    pub fn for_target(target: &str, rule: &plan::Expect) -> Self {
        match rule {
            plan::Expect::Any => Self::with(|status, body| status_and(status, body, |_| true)),
            plan::Expect::Pattern(pattern) => {
                // The CLI has compiled it once already: it compiles.
                let regex = regex::bytes::Regex::new(pattern).unwrap_or_else(|_| {
                    regex::bytes::Regex::new("$^").expect("a regex that matches nothing")
                });
                Self::with(move |status, body| {
                    status_and(status, body, |body| regex.is_match(body))
                })
            }
            plan::Expect::Greeting => {
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
                                json::<World>(body).is_some_and(|w| w.is_seeded())
                            })
                        })
                    }
                    paths::QUERIES => {
                        let n = greet_store::queries_from_query(query);
                        return Self::with(move |status, body| {
                            status_and(status, body, |body| {
                                json::<Vec<World>>(body).is_some_and(|rows| {
                                    rows.len() == n && rows.iter().all(World::is_seeded)
                                })
                            })
                        });
                    }
                    paths::BUSINESS => return Self::business(query),
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

    impl Expect {
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
        let world = Expect::for_target("/greetings", &plan::Expect::Greeting);
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
        let ana = Expect::for_target("/greetings?name=Ana&x=1", &plan::Expect::Greeting);
        assert_eq!(ana.check_response(&answer("Oi Ana!")), Ok(()));
        assert_eq!(
            ana.check_response(&answer("Oi World!")),
            Err(ErrorKind::Body)
        );
        let joao = Expect::for_target(
            "/greetings/blocking?name=Jo%C3%A3o",
            &plan::Expect::Greeting,
        );
        assert_eq!(joao.check_response(&answer("Hallo João!")), Ok(()));
        assert_eq!(
            Expect::for_target("/health", &plan::Expect::Greeting).check_response(&answer("ok")),
            Ok(())
        );
        let refused = response(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n");
        let any = Expect::for_target("/x", &plan::Expect::Any);
        assert_eq!(any.check_response(&answer("anything")), Ok(()));
        assert_eq!(any.check_response(&refused), Err(ErrorKind::Status));
        let pattern = Expect::for_target("/x", &plan::Expect::Pattern("^Ol. ".into()));
        assert_eq!(pattern.check_response(&answer("Olá Ana!")), Ok(()));
        assert_eq!(
            pattern.check_response(&answer("Hi Ana!")),
            Err(ErrorKind::Body)
        );
        assert_eq!(
            Expect::for_target("/greetings?name=%ZZ", &plan::Expect::Greeting)
                .check_response(&refused),
            Err(ErrorKind::Status)
        );
    }

    #[test]
    fn validates_the_store_bound_answers() {
        let rule = &plan::Expect::Greeting;
        let row = |id: i32| {
            format!(
                r#"{{"id":{id},"randomNumber":{}}}"#,
                greet_store::seed::world_number(id)
            )
        };
        let db = Expect::for_target("/db", rule);
        assert_eq!(db.check_response(&answer(&row(17))), Ok(()));
        let wrong = format!(
            r#"{{"id":17,"randomNumber":{}}}"#,
            greet_store::seed::world_number(17) % 10_000 + 1
        );
        for bad in [
            wrong.as_str(),
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
        let three = Expect::for_target("/queries?queries=3", rule);
        assert_eq!(
            three.check_response(&answer(&format!("[{},{},{}]", row(1), row(2), row(10_000)))),
            Ok(())
        );
        assert_eq!(
            three.check_response(&answer(&format!("[{},{}]", row(1), row(2)))),
            Err(ErrorKind::Body)
        );
        let one = Expect::for_target("/queries?queries=x", rule);
        assert_eq!(
            one.check_response(&answer(&format!("[{}]", row(5)))),
            Ok(())
        );

        let word = greet_store::seed::person_word(42);
        let other = WORDS.iter().find(|w| **w != word).unwrap();
        let business = |greeting: &str, visits: u64| {
            answer(&format!(
                r#"{{"name":"user-00042","greeting":"{greeting}","visits":{visits}}}"#
            ))
        };
        let known = Expect::for_target("/business?name=user-00042", rule);
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
        let ana = Expect::for_target("/business?name=Ana", rule);
        let body = format!(r#"{{"name":"Ana","greeting":"{other} Ana!","visits":1}}"#);
        assert_eq!(ana.check_response(&answer(&body)), Ok(()));
        let bad = Expect::for_target("/business?name=%ZZ", rule);
        assert_eq!(bad.check_response(&answer("{}")), Err(ErrorKind::Body));
    }
}
