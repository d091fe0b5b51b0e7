//! Each knob on each server it applies to, against the contract: the rows it changes are
//! exactly the ones written here (and in docs/knobs.md), so a knob that starts to give up
//! more, or less, fails this. At the defaults every row passes (the contract suite). The build
//! knobs cannot be turned on in this process: greet-bench checks their binaries (docs/knobs.md).

use greet_conformance::knobs::{failing_rows, IDLE, SLOW_HEAD};
use greet_conformance::spawn::{quick, spawn};
use greet_server::{Knob, ServerConfig};

const OVERSIZED_HEAD: &str = "oversized_head_gets_431";
const BAD_INPUTS: &str = "bad_inputs_get_their_answers";

/// The rows of the contract each knob changes, measured on every server it applies to.
fn changes(knob: Knob) -> Vec<&'static str> {
    match knob {
        Knob::PipelineFlush => vec![OVERSIZED_HEAD, BAD_INPUTS],
        Knob::StackHeaders => vec![],
        Knob::NoHeadTimeout | Knob::OsKeepAlive => vec![SLOW_HEAD, IDLE],
        Knob::Mimalloc | Knob::FatLto | Knob::PanicAbort => {
            unreachable!("a build knob is not turned on in-process")
        }
    }
}

macro_rules! knob_tests {
    ($($server:ident => $run:path,)*) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $server() {
                let name = concat!("greet-", stringify!($server));
                let mut wrong = Vec::new();
                for knob in Knob::ALL.into_iter().filter(|k| k.applies_to(name) && !k.is_build()) {
                    let config = ServerConfig { knobs: vec![knob], ..quick() };
                    let server = spawn(|l, c, s| $run(l, c, s), config).expect("server starts");
                    let failing = failing_rows(server.addr()).await;
                    let rows: Vec<&str> = failing.iter().map(|(row, _)| *row).collect();
                    if rows != changes(knob) {
                        wrong.push(format!("{knob}: {failing:?}, want {:?}", changes(knob)));
                    }
                }
                assert!(wrong.is_empty(), "{name}:\n{}", wrong.join("\n"));
            }
        )*
    };
}

greet_conformance::for_each_server!(knob_tests);
