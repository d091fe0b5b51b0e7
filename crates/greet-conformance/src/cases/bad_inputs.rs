//! The bad-input table as a case: every raw request of [`crate::bad_input`] answered as the
//! table allows, and the server serving after them.

use std::net::SocketAddr;

use crate::bad_input::{answer, table};
use crate::Outcome;

/// Every row of the bad-input table ([`crate::bad_input::table`]) gets one of its allowed answers, and the server still serves.
pub async fn bad_inputs_get_their_answers(addr: SocketAddr) -> Outcome {
    let mut set = tokio::task::JoinSet::new();
    for input in table() {
        set.spawn(async move {
            let got = answer(addr, &input).await;
            (input, got)
        });
    }
    let mut wrong = Vec::new();
    while let Some(joined) = set.join_next().await {
        let (input, got) = joined?;
        match got {
            Ok(answer) if input.expect.contains(&answer) => {}
            other => wrong.push(format!(
                "{}: got {other:?}, want {:?}",
                input.name, input.expect
            )),
        }
    }
    if !wrong.is_empty() {
        wrong.sort();
        anyhow::bail!(wrong.join("; "));
    }
    super::health_is_ok(addr).await
}
