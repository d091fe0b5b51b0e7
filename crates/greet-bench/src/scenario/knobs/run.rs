//! The knobs scenario's own part, the contract: each server (every crate at its defaults and
//! with each knob) started afresh, in cleartext, and [`failing_rows`] run against it: the
//! contract's quick cases, a slow head, HTTP/1.1's idle limit and a WebSocket echo. The rows
//! a knob fails that its crate answers are what it gives up ([`Section::given_up`]).

use anyhow::Result;
use greet_conformance::knobs::failing_rows;
use greet_load::Wire;

use crate::harness::{Harness, Start, Subject};
use crate::scenario::kit::{Book, Run};
use greet_model::results::Frame;

use super::{Checked, FailingRow, Knobs, Plan, Section};

impl Run for Knobs {
    /// Runs the contract part on every server of the plan, one at a time.
    async fn run(harness: &Harness, plan: &Plan, book: &mut Book<'_, Self>) -> Result<()> {
        book.open(Section {
            frame: Frame::new(1),
            ..Section::default()
        });
        let (args, _) = harness.server_args(&plan.base.server);
        // The rows are raw HTTP/1.1 in cleartext, whatever --protocol the timed part runs over.
        let cleartext = Wire::default();
        for short in plan.servers() {
            let subject = Subject::Server(short);
            let name = subject.name();
            book.once(&name, async |book| {
                // Started as it will be loaded, without the contract check before it: the
                // check is what this part runs, row by row.
                let start = Start {
                    checked: true,
                    wire: Some(&cleartext),
                    ..Start::new(
                        &subject,
                        &args,
                        &plan.base.foreign,
                        greet_core::paths::HEALTH,
                    )
                };
                let up = harness.bring_up(plan.base.place, &start).await?;
                let failing: Vec<FailingRow> = failing_rows(up.addr)
                    .await
                    .into_iter()
                    .map(|(row, why)| FailingRow {
                        row: row.to_owned(),
                        why,
                    })
                    .collect();
                harness.say(
                    &name,
                    &match failing.len() {
                        0 => "answers every row of the contract".to_owned(),
                        n => format!("fails {n} row(s) of the contract"),
                    },
                );
                book.section().servers.push(Checked {
                    server: name.clone(),
                    failing,
                });
                harness.release(up).await
            })
            .await?;
        }
        Ok(())
    }
}
