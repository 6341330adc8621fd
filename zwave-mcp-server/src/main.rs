//! `zwave-mcp-server`: parse the configuration, start logging, run. See the library docs.

use std::process::ExitCode;

use clap::Parser as _;
use zwave_mcp_server::{Config, logging, run};

fn main() -> ExitCode {
    // clap prints usage errors to stderr and exits with code 2; stdout stays untouched.
    let config = Config::parse();
    let _log = match logging::init(&config.log_level, config.log_dir.as_deref()) {
        Ok(guard) => guard,
        Err(err) => {
            eprintln!("zwave-mcp-server: {err}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => {
            tracing::error!(error = %err, "cannot start the async runtime");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(config)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            tracing::error!("{err:#}");
            ExitCode::FAILURE
        }
    }
}
