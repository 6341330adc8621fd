//! The protocol's stdin/stdout, kept private so nothing else can write to the protocol stream.
//!
//! On Linux, when stdin and stdout are pipes (how MCP hosts start servers), both are re-opened
//! through `/proc/self/fd` as the protocol's own non-blocking pipe handles, and fd 1 is then
//! pointed at stderr. A stray write to fd 1 by any code (a dependency, a C library, a child
//! process) lands in the log instead of corrupting, or splitting, a JSON-RPC message.
//! Elsewhere, or when stdout is not a pipe, rmcp's stdio handles are used unchanged.

use tokio::io::{AsyncRead, AsyncWrite};

/// The reader and writer of the JSON-RPC stream.
pub type ProtocolIo = (
    Box<dyn AsyncRead + Send + Unpin>,
    Box<dyn AsyncWrite + Send + Unpin>,
);

/// Takes the protocol's stdin/stdout. Must be called inside the tokio runtime, once.
pub fn take() -> ProtocolIo {
    #[cfg(target_os = "linux")]
    match private_pipes() {
        Ok(io) => return io,
        Err(reason) => {
            tracing::debug!(%reason, "stdout stays shared: not a pipe pair")
        }
    }
    let (reader, writer) = rmcp::transport::io::stdio_pipes();
    (Box::new(reader), Box::new(writer))
}

#[cfg(target_os = "linux")]
fn private_pipes() -> Result<ProtocolIo, std::io::Error> {
    use tokio::net::unix::pipe;

    let reader = pipe::OpenOptions::new().open_receiver("/proc/self/fd/0")?;
    let writer = pipe::OpenOptions::new().open_sender("/proc/self/fd/1")?;
    rustix::stdio::dup2_stdout(std::io::stderr())?;
    tracing::debug!("protocol pipes re-opened privately; fd 1 now points at stderr");
    Ok((Box::new(reader), Box::new(writer)))
}
