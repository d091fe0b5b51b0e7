//! The shutdown signal: SIGTERM (what `docker stop` and the harness send) or Ctrl-C.

/// Resolves on the first SIGTERM or Ctrl-C (SIGINT). Every server passes it to its `serve`,
/// which then stops accepting, lets in-flight requests finish and returns, so both signals
/// drain the same way on all three servers.
///
/// Must be polled inside a Tokio runtime with I/O enabled.
pub async fn signal() {
    let ctrl_c = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut stream) => {
                stream.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();

    tokio::select! {
        () = ctrl_c => tracing::info!("Ctrl-C received: draining"),
        () = terminate => tracing::info!("SIGTERM received: draining"),
    }
}
