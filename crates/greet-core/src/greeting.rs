//! The five words, the [`Greeter`] and the endpoint logic every server calls.

use std::borrow::Cow;
use std::future::Future;
use std::num::NonZeroUsize;
use std::time::Duration;

use crate::name::name_from_query;
use crate::pool::BlockingPool;
use crate::GreetError;

/// The words a greeting starts with, each drawn with equal probability per request.
pub const WORDS: [&str; 5] = ["Hello", "Hi", "Olá", "Oi", "Hallo"];

/// The original experiment's delay before each greeting.
pub const DEFAULT_DELAY: Duration = Duration::from_secs(1);

/// The original experiment's thread pool: Spring Boot's default of 200 Tomcat workers, here
/// the bound of the pool behind `/greetings/blocking`.
pub const DEFAULT_BLOCKING_THREADS: NonZeroUsize = NonZeroUsize::new(200).expect("non-zero");

/// A greeting for `name`: `"<word> <name>!"` with a word drawn at random (rand's thread-local
/// generator: `core/greeting` in the benches measures it).
pub fn greeting(name: &str) -> String {
    #[cfg(feature = "seeded-cost")]
    seeded_cost();
    let word = WORDS[rand::random_range(..WORDS.len())];
    let mut out = String::with_capacity(word.len() + name.len() + 2);
    out.push_str(word);
    out.push(' ');
    out.push_str(name);
    out.push('!');
    out
}

/// Work added on purpose to every greeting, in a build made for it (`--features
/// greet-core/seeded-cost`, never a shipped one): `GREET_SEEDED_COST` rounds of a loop the
/// optimiser cannot remove, read once (none when unset). A known cost, to show that a cost gate
/// catches what it claims to (`benches/scripts/seeded-cost.sh`).
#[cfg(feature = "seeded-cost")]
fn seeded_cost() {
    static ROUNDS: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    let rounds = *ROUNDS.get_or_init(|| {
        std::env::var("GREET_SEEDED_COST")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    });
    let mut x = 0u64;
    for i in 0..rounds {
        x = std::hint::black_box(x.wrapping_mul(31) ^ i);
    }
    std::hint::black_box(x);
}

/// What a server sends back, before its framework turns it into a response: plain text
/// ([`crate::CONTENT_TYPE`]) but for JSON ([`crate::JSON_CONTENT_TYPE`]) and the fortunes
/// page ([`crate::HTML_CONTENT_TYPE`]), always with `nosniff`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    /// HTTP status code.
    pub status: u16,
    /// The body.
    pub body: Cow<'static, str>,
    /// `content-type` of the body.
    pub content_type: &'static str,
    /// `Allow` header value, for a 405.
    pub allow: Option<&'static str>,
}

impl Reply {
    /// A plain-text 200 with this body.
    pub fn ok(body: impl Into<Cow<'static, str>>) -> Self {
        Self {
            status: 200,
            body: body.into(),
            content_type: crate::CONTENT_TYPE,
            allow: None,
        }
    }

    /// A 200 with this JSON body.
    pub fn json(body: String) -> Self {
        Self {
            content_type: crate::JSON_CONTENT_TYPE,
            ..Self::ok(body)
        }
    }

    /// A 200 with this HTML page.
    pub fn html(body: String) -> Self {
        Self {
            content_type: crate::HTML_CONTENT_TYPE,
            ..Self::ok(body)
        }
    }

    /// The answer to `GET /health`.
    pub fn health() -> Self {
        Self::ok("ok")
    }

    /// The answer to `GET /plaintext` (TechEmpower's plaintext test).
    pub fn plaintext() -> Self {
        Self::ok(crate::records::HELLO)
    }

    /// The answer to `GET /json` (TechEmpower's JSON test): the object serialized afresh for
    /// each request, as their rules ask, not a cached string.
    pub fn hello_json() -> Self {
        // Serializing a struct of one string cannot fail.
        Self::json(serde_json::to_string(&crate::records::Message::hello()).unwrap_or_default())
    }
}

impl From<GreetError> for Reply {
    fn from(err: GreetError) -> Self {
        Self {
            status: err.status(),
            body: Cow::Borrowed(err.reason()),
            content_type: crate::CONTENT_TYPE,
            allow: err.allow(),
        }
    }
}

impl From<Result<String, GreetError>> for Reply {
    fn from(result: Result<String, GreetError>) -> Self {
        result.map_or_else(Reply::from, Reply::ok)
    }
}

/// The greeting service: a delay, then a greeting. Cheap to clone; clones share the pool.
#[derive(Debug, Clone)]
pub struct Greeter {
    delay: Duration,
    pool: BlockingPool,
}

impl Greeter {
    /// A greeter that waits `delay` before answering; `/greetings/blocking` waits on a pool
    /// of at most `blocking_threads` threads.
    pub fn new(delay: Duration, blocking_threads: NonZeroUsize) -> Self {
        Self {
            delay,
            pool: BlockingPool::new(blocking_threads),
        }
    }

    /// The blocking pool behind [`Greeter::greet_blocking`].
    pub fn pool(&self) -> &BlockingPool {
        &self.pool
    }

    /// Greets after the delay, on an async timer: no thread is held while waiting.
    pub async fn greet(&self, name: &str) -> String {
        if !self.delay.is_zero() {
            tokio::time::sleep(self.delay).await;
        }
        greeting(name)
    }

    /// Greets after the delay, holding a thread of the bounded pool while waiting.
    pub async fn greet_blocking(&self, name: Cow<'static, str>) -> Result<String, GreetError> {
        let delay = self.delay;
        self.pool
            .run(move || {
                if !delay.is_zero() {
                    std::thread::sleep(delay);
                }
                greeting(&name)
            })
            .await
    }

    /// `GET /greetings?<query>`: the raw (undecoded) query string in, the reply out.
    pub fn greetings(&self, query: Option<&str>) -> impl Future<Output = Reply> + Send + 'static {
        self.respond(Endpoint::Greetings, query)
    }

    /// `GET /greetings/blocking?<query>`.
    pub fn greetings_blocking(
        &self,
        query: Option<&str>,
    ) -> impl Future<Output = Reply> + Send + 'static {
        self.respond(Endpoint::GreetingsBlocking, query)
    }

    /// `POST /greetings`: the reply to a body the server admitted ([`crate::post::admit`])
    /// and read within the limit, or to why it did not (the error of `admit`, or of its
    /// limited body reader: [`GreetError::BodyTooLarge`], or [`GreetError::BadJson`] when the
    /// body broke off). The rules are [`crate::post`]'s; as for `GET`, a refused request is
    /// answered at once and only a greeting waits for the delay. The future owns what it
    /// needs.
    pub fn greetings_post(
        &self,
        body: Result<&[u8], GreetError>,
    ) -> impl Future<Output = Reply> + Send + 'static {
        let name = body.and_then(crate::post::name_from_json);
        let greeter = self.clone();
        async move {
            match name {
                Ok(name) => crate::post::reply(greeter.greet(&name).await),
                Err(err) => err.into(),
            }
        }
    }

    /// The reply of `endpoint` to `query`. The query is read before this returns and the
    /// future owns all it needs, so a server can release the request before the delay: a
    /// request held across the delay pins the connection's read buffer (hyper allocates a
    /// second one for the next read while the first is still shared), which adds up to
    /// megabytes at thousands of connections.
    pub fn respond(
        &self,
        endpoint: Endpoint,
        query: Option<&str>,
    ) -> impl Future<Output = Reply> + Send + 'static {
        let name = name_from_query(query);
        let greeter = self.clone();
        async move {
            let name = match name {
                Ok(name) => name,
                Err(err) => return err.into(),
            };
            match endpoint {
                Endpoint::Greetings => Reply::ok(greeter.greet(&name).await),
                Endpoint::GreetingsBlocking => greeter.greet_blocking(name).await.into(),
            }
        }
    }
}

/// The two greeting endpoints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endpoint {
    /// `/greetings`: the delay is an async timer.
    Greetings,
    /// `/greetings/blocking`: the delay holds a thread of the bounded pool.
    GreetingsBlocking,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;
    use std::time::Instant;

    fn greeter(delay_ms: u64, threads: usize) -> Greeter {
        Greeter::new(
            Duration::from_millis(delay_ms),
            NonZeroUsize::new(threads).unwrap(),
        )
    }

    #[test]
    fn every_word_appears_and_nothing_else() {
        let mut seen = HashSet::new();
        for _ in 0..500 {
            let g = greeting("Ana");
            let word = g.strip_suffix(" Ana!").expect("shape <word> <name>!");
            assert!(WORDS.contains(&word), "{g}");
            seen.insert(word.to_owned());
        }
        assert_eq!(seen.len(), WORDS.len());
    }

    #[tokio::test]
    async fn endpoint_replies() {
        let g = greeter(0, 1);
        let ok = g.greetings(Some("name=Jo%C3%A3o")).await;
        assert_eq!(ok.status, 200);
        assert!(ok.body.ends_with(" João!"), "{}", ok.body);
        let bad = g.greetings(Some("name=%ZZ")).await;
        assert_eq!((bad.status, bad.allow), (400, None));
        let blocking = g.greetings_blocking(None).await;
        assert!(blocking.body.ends_with(" World!"), "{}", blocking.body);
        assert_eq!(
            Reply::from(GreetError::MethodNotAllowed).allow,
            Some("GET, HEAD")
        );
    }

    #[tokio::test(start_paused = true)]
    async fn async_delay_is_a_timer() {
        let g = greeter(1000, 1);
        let start = tokio::time::Instant::now();
        let replies = futures_all(&g, 100).await;
        assert!(replies.iter().all(|r| r.status == 200));
        // Paused time: 100 concurrent greetings take exactly one delay.
        assert_eq!(start.elapsed(), Duration::from_millis(1000));
    }

    async fn futures_all(g: &Greeter, n: usize) -> Vec<Reply> {
        let mut set = tokio::task::JoinSet::new();
        for _ in 0..n {
            let g = g.clone();
            set.spawn(async move { g.greetings(None).await });
        }
        set.join_all().await
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn blocking_delay_is_bounded_by_the_pool() {
        let g = greeter(50, 2);
        let start = Instant::now();
        let mut set = tokio::task::JoinSet::new();
        for _ in 0..6 {
            let g = g.clone();
            set.spawn(async move { g.greetings_blocking(None).await });
        }
        let replies = set.join_all().await;
        assert!(replies.iter().all(|r| r.status == 200));
        // 6 jobs on 2 threads: three rounds of 50 ms.
        assert!(start.elapsed() >= Duration::from_millis(150));
        assert_eq!(g.pool().threads(), 2);
    }
}
