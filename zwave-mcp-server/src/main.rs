//! `zwave-mcp-server`: parse the configuration, start logging, run. See the library docs.

use std::process::ExitCode;

use clap::Parser as _;
use zwave_mcp_server::{Config, ConfigError, logging, run};

fn main() -> ExitCode {
    // clap prints usage errors to stderr and exits with code 2; stdout stays untouched.
    let config = Config::parse();
    let _log = match logging::init(&config.logging.log_level, config.logging.log_dir.as_deref()) {
        Ok(guard) => guard,
        Err(err) => {
            eprintln!("zwave-mcp-server: {err}");
            return ExitCode::from(2);
        }
    };
    // One thread: a call's hand-offs (rmcp's service loop → the tool's task → the writer) and
    // the MQTT event loop then never wake another thread. Against two workers, CPU per
    // `get_device_status` fell from 17 to 14 µs and context switches by a third; peak RSS by
    // 1 MiB (issue 11's note). The embedded demo broker runs on threads of its own.
    let runtime = match tokio::runtime::Builder::new_current_thread()
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
            // A configuration that cannot work exits as a bad flag does.
            if err.is::<ConfigError>() {
                ExitCode::from(2)
            } else {
                ExitCode::FAILURE
            }
        }
    }
}
