//! The release binary where a home, a client or a device misbehaves or fails: untrusted
//! names, text and oversized messages, protocol misuse and cancellation, sensitive actions,
//! devices that ignore or contradict a command, and links that go down or answer late. The
//! binary runs against the simulated servers, whose record of every request they received is
//! the witness of what was written.
//!
//! | module | checks |
//! |---|---|
//! | `bound` | cancellation and request ids within the bound on requests in flight |
//! | `broker` | a huge retained message on the broker is dropped, the connection stays up |
//! | `classes` | locks, thermostats, covers, sirens and colours confirmed only by their reports; scene buttons |
//! | `confirm` | "confirmed" only when the device said so; stuck and superseded commands |
//! | `down` | the link down and back, interviews still running, a frozen zwave-js-server |
//! | `late` | a write that timed out may still take effect, and says so |
//! | `marked` | a device marked sensitive only ever adds a question |
//! | `memory` | huge frames and values do not grow the server |
//! | `names` | names reach exactly the device they name, or nothing |
//! | `protocol` | lines that cannot be taken, ids, batches, a key twice |
//! | `reads` | list, status and readings say the same over both backends |
//! | `text` | what the gateway says is data: no forged rows or log lines |

mod bound;
mod broker;
mod classes;
mod confirm;
mod down;
mod late;
mod marked;
mod memory;
mod names;
mod protocol;
mod reads;
mod text;
