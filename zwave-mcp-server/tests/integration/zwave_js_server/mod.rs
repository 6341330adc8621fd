//! The zwave-js-server backend: against a scripted server that answers as recorded sessions
//! did (`scripted`), and against the real zwave-js driver behind the real zwave-js-server from
//! npm on zwave-js's mock controller: the connection (`real_driver`), the binary's tools on a
//! home (`home`), the device classes beyond switches (`classes`) and the network's health
//! and pings (`health`), upkeep operations (`upkeep`), and a subscriber told of a device
//! another client switched (`subscription`).

mod classes;
mod health;
mod home;
mod real_driver;
mod scripted;
mod subscription;
mod upkeep;
