//! What one incoming message may hold before any tree of it is built, walked in one pass over
//! its bytes: every key once, a valid id, at most [`MAX_VALUES`] values nested at most
//! [`MAX_DEPTH`] deep, and the parts a session or stream keeps from its client within their
//! [`KEPT`] budgets. [`Refusal`](super::refusal::Refusal) words what a walk found.
//!
//! Why bound before parsing: rmcp types a message through untagged enums that buffer the
//! whole tree, some 100 bytes a value, and keeps a session's `initialize` params (and a listen
//! stream's `_meta`) for the session's life. A 4 MiB `[0,0,…]` in a tool call's arguments cost
//! 400 MB; ten sessions opened with one in `capabilities.experimental` held 726 MB.

use std::{
    cell::{Cell, RefCell},
    collections::HashSet,
    fmt,
};

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Value, value::RawValue};

/// The most bytes one message may take over HTTP (a body; a stdio line may take four times as
/// many, see [`MAX_LINE`](super::line::MAX_LINE)). The largest
/// message a client has reason to send this server is an `initialize` (its kept parts below,
/// 32 KiB at most) or a 2025-03-26 batch of 64 tool calls (a few hundred bytes each): 1 MiB
/// leaves some ten times that, and refusing a larger one costs nothing kept.
pub const MAX_MESSAGE_BYTES: usize = 1024 * 1024;

/// The most JSON values (scalars, arrays and objects) in one message. A tool call holds some
/// ten; a batch of 64 calls with 2026-07-28 metadata well under 5,000.
pub const MAX_VALUES: usize = 10_000;

/// The deepest nesting of arrays and objects in one message (a tool call nests 3 deep).
pub const MAX_DEPTH: usize = 32;

/// The most objects in one message: each costs some 650 bytes once built (a map's node),
/// where its JSON may take 8 (`{"b":0}`): 10,000 of them were 4 MB a request. A tool call
/// holds 3 or 4; a batch of 64 calls some 300.
pub const MAX_OBJECTS: usize = 512;

/// A part of a message that the server keeps beyond the request that carried it, and the most
/// bytes it may take as compact JSON (escapes aside).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kept {
    /// Where it is, as `params.capabilities`.
    pub path: &'static str,
    /// The most bytes allowed.
    pub limit: usize,
    /// The most objects allowed (each costs far more kept than its bytes say).
    pub objects: usize,
}

/// Every kept part: what a 2025-11-25 session keeps of its `initialize` for its life, the
/// `_meta` of every request (2026-07-28 carries the client's info and capabilities in it; a
/// listen stream keeps it), and the progress token copied into every progress notification.
pub const KEPT: [Kept; 4] = [
    Kept {
        path: "params.capabilities",
        limit: 8 * 1024,
        objects: 32,
    },
    Kept {
        path: "params.clientInfo",
        limit: 8 * 1024,
        objects: 16,
    },
    Kept {
        path: "params._meta",
        limit: 16 * 1024,
        objects: 64,
    },
    PROGRESS_TOKEN,
];

/// The progress token: a number or a short string (a UUID is 36 characters).
pub const PROGRESS_TOKEN: Kept = Kept {
    path: "params._meta.progressToken",
    limit: 128,
    objects: 0,
};

/// What a walk found wrong, besides JSON that does not parse.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Fault {
    /// An object holds this key twice.
    DuplicateKey(String),
    /// More than [`MAX_VALUES`] values.
    TooManyValues,
    /// More than [`MAX_OBJECTS`] objects.
    TooManyObjects,
    /// Nested deeper than [`MAX_DEPTH`].
    TooDeep,
    /// A kept part over its budget: at least this many bytes.
    TooLarge(Kept, usize),
    /// A kept part holding more objects than its budget: this many.
    TooManyKeptObjects(Kept, usize),
}

/// What a walk of a message found: its fault, if any, and its top-level id.
#[derive(Debug, Default)]
pub(crate) struct Walked {
    /// The first fault met; the walk stopped there.
    pub fault: Option<Fault>,
    /// The top-level `id` as sent, when it was met once before the walk stopped.
    pub id: Option<Value>,
    /// Whether the top-level `id` was met twice.
    pub id_twice: bool,
    /// serde's words when the message is not JSON (or the walk stopped on a fault).
    pub error: Option<String>,
}

/// Walks `message` (UTF-8 already checked), never building more than its top-level id.
pub(crate) fn walk(message: &[u8]) -> Walked {
    let state = State::default();
    let mut reader = serde_json::Deserializer::from_slice(message);
    let walked = Walker {
        state: &state,
        depth: 0,
        place: Place::Top,
    }
    .deserialize(&mut reader)
    .and_then(|()| reader.end());
    let State {
        fault,
        id,
        id_twice,
        ..
    } = state;
    let mut walked = Walked {
        fault: fault.into_inner(),
        id: id.into_inner(),
        id_twice: id_twice.get(),
        error: walked.err().map(|error| error.to_string()),
    };
    if walked.fault.is_some() && walked.id.is_none() && !walked.id_twice {
        walked.id = id_after_the_fault(message);
    }
    walked
}

/// The top-level id of a message whose walk stopped before reaching it: read again skipping
/// everything else (serde's `IgnoredAny` builds nothing).
fn id_after_the_fault(message: &[u8]) -> Option<Value> {
    #[derive(serde::Deserialize)]
    struct OnlyTheId<'a> {
        #[serde(borrow)]
        id: Option<&'a RawValue>,
    }
    let raw = serde_json::from_slice::<OnlyTheId<'_>>(message).ok()?.id?;
    let walked = walk(raw.get().as_bytes());
    walked.fault.is_none().then_some(())?;
    serde_json::from_str(raw.get()).ok()
}

/// What a walk has found so far.
#[derive(Default)]
struct State {
    fault: RefCell<Option<Fault>>,
    id: RefCell<Option<Value>>,
    id_twice: Cell<bool>,
    values: Cell<usize>,
    objects: Cell<usize>,
    /// Bytes of compact JSON met inside kept parts (only there), counting up.
    measured: Cell<usize>,
    /// How many kept parts the walk is inside: bytes are measured while it is above zero.
    measuring: Cell<usize>,
}

impl State {
    fn fail<E: de::Error>(&self, fault: Fault) -> E {
        *self.fault.borrow_mut() = Some(fault);
        E::custom("the message is refused")
    }

    /// Counts one value of `bytes` compact bytes.
    fn value<E: de::Error>(&self, bytes: usize) -> Result<(), E> {
        let values = self.values.get() + 1;
        self.values.set(values);
        if values > MAX_VALUES {
            return Err(self.fail(Fault::TooManyValues));
        }
        self.measure(bytes);
        Ok(())
    }

    fn measure(&self, bytes: usize) {
        if self.measuring.get() > 0 {
            self.measured.set(self.measured.get() + bytes);
        }
    }
}

/// Where in the message a value is: the places that hold kept parts are told apart.
#[derive(Clone, Copy, PartialEq)]
enum Place {
    Top,
    Params,
    Meta,
    Elsewhere,
}

/// Walks any JSON value, counting it and what it holds.
#[derive(Clone, Copy)]
struct Walker<'a> {
    state: &'a State,
    /// Arrays and objects around this value.
    depth: usize,
    place: Place,
}

impl Walker<'_> {
    /// The walker of the values inside this one, after the key `key` (`None` in an array).
    fn inside<E: de::Error>(self, key: Option<&str>) -> Result<Self, E> {
        if self.depth + 1 > MAX_DEPTH {
            return Err(self.state.fail(Fault::TooDeep));
        }
        let place = match (self.place, key) {
            (Place::Top, Some("params")) => Place::Params,
            (Place::Params, Some("_meta")) => Place::Meta,
            _ => Place::Elsewhere,
        };
        Ok(Self {
            depth: self.depth + 1,
            place,
            ..self
        })
    }

    /// The kept part that the value after `key` is, if it is one.
    fn kept(self, key: &str) -> Option<Kept> {
        let path = match (self.place, key) {
            (Place::Params, "capabilities") => "params.capabilities",
            (Place::Params, "clientInfo") => "params.clientInfo",
            (Place::Params, "_meta") => "params._meta",
            (Place::Meta, "progressToken") => PROGRESS_TOKEN.path,
            _ => return None,
        };
        KEPT.into_iter().find(|kept| kept.path == path)
    }

    /// Walks the value after `key` of an object.
    fn member<'de, A: MapAccess<'de>>(self, map: &mut A, key: &str) -> Result<(), A::Error> {
        let inner = self.inside(key.into())?;
        let Some(kept) = self.kept(key) else {
            return map.next_value_seed(inner);
        };
        let state = self.state;
        let (start, objects) = (state.measured.get(), state.objects.get());
        state.measuring.set(state.measuring.get() + 1);
        let walked = map.next_value_seed(inner);
        state.measuring.set(state.measuring.get() - 1);
        walked?;
        let size = state.measured.get() - start;
        if size > kept.limit {
            return Err(state.fail(Fault::TooLarge(kept, size)));
        }
        let objects = state.objects.get() - objects;
        if objects > kept.objects {
            return Err(state.fail(Fault::TooManyKeptObjects(kept, objects)));
        }
        Ok(())
    }

    /// Takes the top-level id: counted and checked like any value, kept as sent.
    fn id<'de, A: MapAccess<'de>>(self, map: &mut A) -> Result<(), A::Error> {
        let raw: &RawValue = map.next_value()?;
        let mut reader = serde_json::Deserializer::from_str(raw.get());
        self.inside::<A::Error>(None)?
            .deserialize(&mut reader)
            .map_err(de::Error::custom)?;
        let id = serde_json::from_str(raw.get()).map_err(de::Error::custom)?;
        *self.state.id.borrow_mut() = Some(id);
        Ok(())
    }
}

impl<'de> DeserializeSeed<'de> for Walker<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

/// Digits of a number as sent, near enough for a budget of bytes.
fn digits(number: u64) -> usize {
    number.checked_ilog10().map_or(1, |log| log as usize + 1)
}

impl<'de> Visitor<'de> for Walker<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E: de::Error>(self, value: bool) -> Result<(), E> {
        self.state.value(if value { 4 } else { 5 })
    }

    fn visit_i64<E: de::Error>(self, value: i64) -> Result<(), E> {
        self.state.value(1 + digits(value.unsigned_abs()))
    }

    fn visit_u64<E: de::Error>(self, value: u64) -> Result<(), E> {
        self.state.value(digits(value))
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        // The longest form serde writes a double in.
        self.state.value(24)
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<(), E> {
        self.state.value(value.len() + 2)
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.state.value(4)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        self.state.value(2)?;
        let inner = self.inside(None)?;
        if seq.next_element_seed(inner)?.is_some() {
            // The comma before each element after the first.
            while seq.next_element_seed(inner)?.is_some() {
                self.state.measure(1);
            }
        }
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        self.state.value(2)?;
        let objects = self.state.objects.get() + 1;
        self.state.objects.set(objects);
        if objects > MAX_OBJECTS {
            return Err(self.state.fail(Fault::TooManyObjects));
        }
        // Most objects are small: a list is faster than hashing until there are many keys.
        let mut keys: Vec<String> = Vec::new();
        let mut many: HashSet<String> = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            let seen = if many.is_empty() {
                keys.contains(&key)
            } else {
                many.contains(&key)
            };
            let is_id = self.place == Place::Top && key == "id";
            if is_id && seen {
                self.state.id_twice.set(true);
            }
            if seen {
                return Err(self.state.fail(Fault::DuplicateKey(key)));
            }
            // The key, its quotes and colon, and the comma before every member but the first.
            let comma = usize::from(!keys.is_empty() || !many.is_empty());
            self.state.measure(key.len() + 3 + comma);
            if is_id {
                self.id(&mut map)?;
            } else {
                self.member(&mut map, &key)?;
            }
            if many.is_empty() && keys.len() < 16 {
                keys.push(key);
            } else {
                many.extend(keys.drain(..));
                many.insert(key);
            }
        }
        Ok(())
    }
}
