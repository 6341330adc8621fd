//! The zwave-js-server backend: against a scripted server that answers as recorded sessions
//! did (`scripted`), and against the real zwave-js driver behind the real zwave-js-server from
//! npm on zwave-js's mock controller: the connection (`real_driver`), the binary's tools on a
//! home (`home`) and the device classes beyond switches (`classes`).

mod classes;
mod home;
mod real_driver;
mod scripted;
